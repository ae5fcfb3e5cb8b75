import { Command } from 'commander';
import { showWebhookDeliveries, WEBHOOK_STATUSES, type WebhooksOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

/** A tenant's webhook deliveries, asked of the orchestrators (`<prefix>.webhooks.<tenant>.deliveries`). */
export function webhooksCommand(): Command {
  return new Command('webhooks')
    .description("a tenant's completion-webhook deliveries (dead ones: attempts spent)")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option('--status <status>', `only ${WEBHOOK_STATUSES.join(', ')}`)
    .option('--limit <n>', 'at most this many, newest first', '100')
    .addHelpText('after', '\nExamples:\n  $ ratchet webhooks --tenant acme --status dead')
    .action(async (opts: WebhooksOptions, cmd: Command) => {
      await showWebhookDeliveries(commandContext(cmd), opts);
    });
}
