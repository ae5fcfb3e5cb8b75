import { Inject, Injectable } from '@nestjs/common';
import type { Msg } from 'nats';
import { tenantOpOfSubject, type WebhooksReply } from '@ratchet/contracts';
import { RequestResponder, ServiceRuntime } from '@ratchet/platform';
import { WebhooksApi, type Clock } from '@ratchet/jobs';
import { SCHEDULE_CLOCK } from '../schedules/schedules.responder';

/**
 * A tenant's webhook deliveries (dead ones included) and its signing secret over NATS request/reply
 * (`<prefix>.webhooks.<tenant>.<op>`); the tenant is the subject's. The secret is shown to admins only.
 */
@Injectable()
export class WebhooksResponder extends RequestResponder {
  private readonly api: WebhooksApi;

  constructor(@Inject(ServiceRuntime) runtime: ServiceRuntime, @Inject(SCHEDULE_CLOCK) clock: Clock) {
    super(runtime, 'orchestrator-webhooks');
    this.api = new WebhooksApi(runtime, clock);
  }

  protected subject(): string {
    return this.runtime.subjects.webhooksAll;
  }

  protected async reply(msg: Msg): Promise<WebhooksReply> {
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
