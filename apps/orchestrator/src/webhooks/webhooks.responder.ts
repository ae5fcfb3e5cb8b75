import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, Subscription } from 'nats';
import {
  newWebhookSecret,
  WebhookDeliveriesRepository,
  type WebhookDelivery,
  type WebhookSecrets,
} from '@ratchet/adapters';
import {
  tenantOpOfSubject,
  WEBHOOK_SIGNATURE_SCHEME,
  WebhooksRequest,
  type WebhookDeliveryView,
  type WebhooksReply,
} from '@ratchet/contracts';
import { ServiceRuntime } from '@ratchet/platform';
import type { Clock } from '@ratchet/jobs';
import { SCHEDULE_CLOCK } from '../schedules/schedules.responder';

/**
 * A tenant's webhook deliveries (dead ones included) and its signing secret over NATS request/reply
 * (`<prefix>.webhooks.<tenant>.<op>`); the tenant is the subject's. The secret is shown to admins only.
 */
@Injectable()
export class WebhooksResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub: Subscription | undefined;

  constructor(
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(SCHEDULE_CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.sub = this.runtime.nc.subscribe(this.runtime.subjects.webhooksAll, {
      queue: 'orchestrator-webhooks',
      callback: (error, msg) => {
        if (!error) void this.respond(msg);
      },
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sub?.drain();
  }

  private async respond(msg: Msg): Promise<void> {
    const scope = tenantOpOfSubject(this.runtime.subjects.prefix, 'webhooks', msg.subject);
    let reply: WebhooksReply;
    try {
      reply = scope
        ? await this.answer(scope.tenant, msg.data)
        : { ok: false, error: { code: 'invalid', message: `not a webhooks subject: ${msg.subject}` } };
    } catch (error) {
      this.runtime.logger.warn({ err: error }, 'webhooks request failed');
      reply = { ok: false, error: { code: 'unavailable', message: 'the webhooks store did not answer; retry' } };
    }
    msg.respond(JSON.stringify(reply));
  }

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
