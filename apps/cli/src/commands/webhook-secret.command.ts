import { Command } from 'commander';
import { webhookSecret, type WebhookSecretOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

/**
 * A tenant's webhook signing secret, asked of the orchestrators as an operator
 * (`<prefix>.webhooks.<tenant>.secret` / `rotate-secret`); `--rotate` replaces it, the previous one
 * signing next to it for the overlap.
 */
export function webhookSecretCommand(): Command {
  return new Command('webhook-secret')
    .description("show or rotate a tenant's webhook signing secret (during a rotation's overlap both sign)")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option('--rotate', 'make a new secret; the previous one keeps signing deliveries for --overlap')
    .option('--overlap <duration>', 'with --rotate: how long the previous secret still signs (0s to 7d)', '24h')
    .addHelpText(
      'after',
      `
Every delivery carries Ratchet-Webhook-Signature: v1=<hex> per valid secret, space-separated (the new
one first): a receiver that accepts any signature it can verify moves to the new secret at its pace.

Examples:
  $ ratchet webhook-secret --tenant acme
  $ ratchet webhook-secret --tenant acme --rotate --overlap 48h`,
    )
    .action(async (opts: WebhookSecretOptions, cmd: Command) => {
      await webhookSecret(commandContext(cmd), opts);
    });
}
