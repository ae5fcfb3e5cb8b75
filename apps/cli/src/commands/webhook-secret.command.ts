import { Command } from 'commander';
import {
  DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS,
  MAX_WEBHOOK_SECRET_OVERLAP_SECONDS,
  subjects,
  WebhooksReply,
  type WebhooksRequest,
} from '@ratchet/contracts';
import { assertToken, CliError, UsageError, withNats } from '@ratchet/operator';
import { commandContext } from '../cli.context';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `30m`, `24h`, `7d` (or a number of seconds) in seconds. */
export function parseOverlap(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * UNITS[m[2] || 's']! : NaN;
  if (!Number.isInteger(seconds) || seconds > MAX_WEBHOOK_SECRET_OVERLAP_SECONDS)
    throw new UsageError(`--overlap must be a duration from 0s to 7d (e.g. 30m, 24h), not ${JSON.stringify(text)}`);
  return seconds;
}

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
    .action(async (opts: { tenant: string; rotate?: boolean; overlap: string }, cmd: Command) => {
      const { config, out } = commandContext(cmd);
      assertToken('tenant', opts.tenant);
      const overlapSeconds = opts.rotate ? parseOverlap(opts.overlap) : DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS;
      const principal = { id: 'ratchet-cli', roles: ['admin'] };
      const request: WebhooksRequest = opts.rotate
        ? { op: 'rotate-secret', principal, overlapSeconds }
        : { op: 'secret', principal };
      const subject = subjects(config.RATCHET_SUBJECT_PREFIX).webhooks(opts.tenant, request.op);
      const reply = await withNats(config, async (nc) => {
        let data: Uint8Array;
        try {
          data = (await nc.request(subject, JSON.stringify(request), { timeout: 10_000 })).data;
        } catch (error) {
          throw new CliError(
            `no orchestrator answered on ${subject}: is one running?`,
            undefined,
            'webhooks.unavailable',
            {
              cause: error,
            },
          );
        }
        return WebhooksReply.parse(JSON.parse(new TextDecoder().decode(data)));
      });
      if (!reply.ok) throw new CliError(reply.error.message, undefined, `webhooks.${reply.error.code}`);
      if (!('secret' in reply))
        throw new CliError('the orchestrator answered without a secret', undefined, 'webhooks.invalid');
      const previousValidUntil = reply.previousValidUntil ?? null;
      if (out.json) {
        out.jsonLine({ tenant: opts.tenant, secret: reply.secret, previousValidUntil, scheme: reply.scheme });
        return;
      }
      out.line(reply.secret);
      out.note(
        previousValidUntil
          ? `${opts.rotate ? 'rotated: ' : ''}the previous secret also signs deliveries until ${previousValidUntil}`
          : `${opts.rotate ? 'rotated: ' : ''}only this secret signs deliveries`,
      );
    });
}
