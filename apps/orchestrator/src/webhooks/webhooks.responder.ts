import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, Subscription } from 'nats';
import { tenantOpOfSubject, type WebhooksReply } from '@ratchet/contracts';
import { serveRequests, ServiceRuntime } from '@ratchet/platform';
import { WebhooksApi, type Clock } from '@ratchet/jobs';
import { SCHEDULE_CLOCK } from '../schedules/schedules.responder';

/**
 * A tenant's webhook deliveries (dead ones included) and its signing secret over NATS request/reply
 * (`<prefix>.webhooks.<tenant>.<op>`); the tenant is the subject's. The secret is shown to admins only.
 */
@Injectable()
export class WebhooksResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub: Subscription | undefined;
  private readonly api: WebhooksApi;

  constructor(
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(SCHEDULE_CLOCK) clock: Clock,
  ) {
    this.api = new WebhooksApi(runtime, clock);
  }

  onApplicationBootstrap(): void {
    this.sub = serveRequests(this.runtime.nc, this.runtime.subjects.webhooksAll, 'orchestrator-webhooks', (msg) =>
      this.reply(msg),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sub?.drain();
  }

  private async reply(msg: Msg): Promise<WebhooksReply> {
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
    return reply;
  }

  answer(tenantId: string, data: Uint8Array): Promise<WebhooksReply> {
    return this.api.answer(tenantId, data);
  }
}
