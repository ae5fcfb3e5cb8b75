import {
  DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS,
  MAX_WEBHOOK_SECRET_OVERLAP_SECONDS,
  subjects,
  WebhooksReply,
  type WebhookDeliveryView,
  type WebhooksRequest,
} from '@ratchet/contracts';
import { assertToken, plural, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { table } from '../format';
import { askOrchestrators } from '../orchestrator-request';

export const WEBHOOK_STATUSES = ['pending', 'delivered', 'dead'] as const;

export interface WebhooksOptions {
  tenant: string;
  status?: string;
  limit: string;
}

/** A tenant's webhook deliveries, asked of the orchestrators (`<prefix>.webhooks.<tenant>.deliveries`). */
export async function showWebhookDeliveries({ config, out }: CommandContext, opts: WebhooksOptions): Promise<void> {
  assertToken('tenant', opts.tenant);
  if (opts.status !== undefined && !(WEBHOOK_STATUSES as readonly string[]).includes(opts.status))
    throw new UsageError(`--status must be one of ${WEBHOOK_STATUSES.join(', ')}, not ${opts.status}`);
  const limit = Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError('--limit must be 1 to 500');
  const request: WebhooksRequest = {
    op: 'deliveries',
    principal: { id: 'ratchet-cli', roles: [] },
    limit,
    ...(opts.status ? { status: opts.status as (typeof WEBHOOK_STATUSES)[number] } : {}),
  };
  const subject = subjects(config.RATCHET_SUBJECT_PREFIX).webhooks(opts.tenant, 'deliveries');
  const reply = WebhooksReply.parse(await askOrchestrators(config, subject, request, 'webhooks'));
  if (!reply.ok) throw new CliError(reply.error.message, undefined, `webhooks.${reply.error.code}`);
  const deliveries: WebhookDeliveryView[] = 'deliveries' in reply ? reply.deliveries : [];
  if (out.json) {
    for (const d of deliveries) out.jsonLine(d);
    return;
  }
  const lines = table([
    ['DELIVERY', 'STATUS', 'ATTEMPTS', 'RUN', 'URL', 'LAST ERROR'],
    ...deliveries.map((d) => [d.deliveryId, d.status, String(d.attempts), d.runId ?? '-', d.url, d.lastError ?? '']),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(`${plural(deliveries.length, 'delivery')} for tenant ${opts.tenant}`.replace('deliverys', 'deliveries'));
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `30m`, `24h`, `7d` (or a number of seconds) in seconds. */
export function parseOverlap(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * UNITS[m[2] || 's']! : NaN;
  if (!Number.isInteger(seconds) || seconds > MAX_WEBHOOK_SECRET_OVERLAP_SECONDS)
    throw new UsageError(`--overlap must be a duration from 0s to 7d (e.g. 30m, 24h), not ${JSON.stringify(text)}`);
  return seconds;
}

export interface WebhookSecretOptions {
  tenant: string;
  rotate?: boolean;
  overlap: string;
}

/**
 * A tenant's webhook signing secret, asked of the orchestrators as an operator
 * (`<prefix>.webhooks.<tenant>.secret` / `rotate-secret`); `rotate` replaces it, the previous one
 * signing next to it for the overlap.
 */
export async function webhookSecret({ config, out }: CommandContext, opts: WebhookSecretOptions): Promise<void> {
  assertToken('tenant', opts.tenant);
  const overlapSeconds = opts.rotate ? parseOverlap(opts.overlap) : DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS;
  const principal = { id: 'ratchet-cli', roles: ['admin'] };
  const request: WebhooksRequest = opts.rotate
    ? { op: 'rotate-secret', principal, overlapSeconds }
    : { op: 'secret', principal };
  const subject = subjects(config.RATCHET_SUBJECT_PREFIX).webhooks(opts.tenant, request.op);
  const reply = WebhooksReply.parse(await askOrchestrators(config, subject, request, 'webhooks'));
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
}
