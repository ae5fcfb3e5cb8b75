import { Controller, Inject } from '@nestjs/common';
import { WebhookDeliveriesRepository } from '@ratchet/adapters';
import { WebhookDeliveryCommand } from '@ratchet/contracts';
import { ConsumesOnItsSubject, ServiceRuntime } from '@ratchet/platform';
import { SCHEDULE_CLOCK } from '../schedules/schedules.responder';
import type { Clock } from '@ratchet/jobs';
import { webhookBody } from '@ratchet/jobs';

export const WEBHOOKS_CONSUMER = 'orchestrator-webhooks';

/**
 * Records each webhook delivery an ended run asked for (committed with the event that ended it, then
 * published from the outbox) in `webhook_deliveries`, once per delivery id; the sender takes it from
 * there. The message is acked only after the row is committed.
 */
@Controller()
export class WebhookCommandsController {
  constructor(
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(SCHEDULE_CLOCK) private readonly clock: Clock,
  ) {}

  @ConsumesOnItsSubject(WEBHOOKS_CONSUMER, WebhookDeliveryCommand, (s) => s.webhookCommands, 'webhook')
  async onDelivery(command: WebhookDeliveryCommand): Promise<void> {
    await new WebhookDeliveriesRepository(this.runtime.db.sql).record(
      { tenantId: command.tenantId, deliveryId: command.deliveryId, url: command.url, body: webhookBody(command) },
      this.clock.now().toISOString(),
    );
  }
}
