import {
  newWebhookSecret,
  WebhookDeliveriesRepository,
  type Database,
  type WebhookDelivery,
  type WebhookSecrets,
} from '@ratchet/adapters';
import {
  WEBHOOK_SIGNATURE_SCHEME,
  WebhooksRequest,
  type WebhookDeliveryView,
  type WebhooksReply,
} from '@ratchet/contracts';
import type { Logger } from '@ratchet/platform';
import type { Clock } from '../clock';

/**
 * A tenant's webhook deliveries (dead ones included) and its signing secret as requests and replies
 * (`WebhooksRequest` → `WebhooksReply`); the tenant is the caller's. The secret is shown to admins only.
 */
export class WebhooksApi {
  constructor(
    private readonly runtime: { readonly db: Database; readonly logger: Logger },
    private readonly clock: Clock,
  ) {}

  async answer(tenantId: string, data: Uint8Array): Promise<WebhooksReply> {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return { ok: false, error: { code: 'invalid', message: 'the request is not JSON' } };
    }
    const parsed = WebhooksRequest.safeParse(raw);
    if (!parsed.success)
      return {
        ok: false,
        error: {
          code: 'invalid',
          message: 'invalid webhooks request',
          problems: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
        },
      };
    const request = parsed.data;
    const repo = new WebhookDeliveriesRepository(this.runtime.db.sql);
    switch (request.op) {
      case 'deliveries':
        return {
          ok: true,
          deliveries: (await repo.list(tenantId, { status: request.status, limit: request.limit })).map(view),
        };
      case 'secret':
        if (!request.principal.roles.includes('admin'))
          return { ok: false, error: { code: 'forbidden', message: 'the signing secret is shown to admins only' } };
        return secretReply(await repo.secrets(tenantId, newWebhookSecret, this.clock.now().toISOString()));
      case 'rotate-secret': {
        if (!request.principal.roles.includes('admin'))
          return { ok: false, error: { code: 'forbidden', message: 'only admins rotate the signing secret' } };
        const now = this.clock.now();
        const until = new Date(now.getTime() + (request.overlapSeconds ?? 0) * 1000).toISOString();
        const secrets = await repo.rotate(tenantId, newWebhookSecret(), until, now.toISOString());
        this.runtime.logger.info(
          { tenantId, by: request.principal.id, previousValidUntil: secrets.previousUntil ?? null },
          'webhook secret rotated',
        );
        return secretReply(secrets);
      }
      default: {
        const _exhaustive: never = request;
        return _exhaustive;
      }
    }
  }
}

function secretReply(s: WebhookSecrets): WebhooksReply {
  return { ok: true, secret: s.current, scheme: WEBHOOK_SIGNATURE_SCHEME, previousValidUntil: s.previousUntil ?? null };
}

function view(d: WebhookDelivery): WebhookDeliveryView {
  const runId = typeof d.body['runId'] === 'string' ? d.body['runId'] : undefined;
  const runStatus = typeof d.body['status'] === 'string' ? d.body['status'] : undefined;
  return {
    deliveryId: d.deliveryId,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    ...(runId ? { runId } : {}),
    ...(runStatus ? { runStatus } : {}),
    lastError: d.lastError,
    lastStatus: d.lastStatus,
    nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt,
  };
}
