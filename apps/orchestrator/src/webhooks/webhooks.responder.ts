import { Inject, Injectable } from '@nestjs/common';
import type { WebhooksReply } from '@ratchet/contracts';
import { ServiceRuntime, TenantRequestResponder } from '@ratchet/platform';
import { WebhooksApi, type Clock } from '@ratchet/jobs';
import { SCHEDULE_CLOCK } from '../schedules/schedules.responder';

/**
 * A tenant's webhook deliveries (dead ones included) and its signing secret over NATS request/reply
 * (`<prefix>.webhooks.<tenant>.<op>`); the tenant is the subject's. The secret is shown to admins only.
 */
@Injectable()
export class WebhooksResponder extends TenantRequestResponder {
  private readonly api: WebhooksApi;

  constructor(@Inject(ServiceRuntime) runtime: ServiceRuntime, @Inject(SCHEDULE_CLOCK) clock: Clock) {
    super(runtime, 'orchestrator-webhooks', 'webhooks');
    this.api = new WebhooksApi(runtime, clock);
  }

  protected subject(): string {
    return this.runtime.subjects.webhooksAll;
  }

  answer(tenantId: string, data: Uint8Array): Promise<WebhooksReply> {
    return this.api.answer(tenantId, data);
  }
}
