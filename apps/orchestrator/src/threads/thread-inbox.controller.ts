import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ThreadInboxMessage } from '@ratchet/contracts';
import { JetStreamContext, parseOnSubject, ServiceRuntime } from '@ratchet/platform';
import { INBOX_CONSUMER, ThreadInbox } from '@ratchet/engine';

export { INBOX_CONSUMER };

/** Model results, tool results and cancels for a thread, applied one message at a time. */
@Controller()
export class ThreadInboxController {
  constructor(
    @Inject(ThreadInbox) private readonly inbox: ThreadInbox,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  @EventPattern(INBOX_CONSUMER)
  async onMessage(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const message = parseOnSubject(ctx, data, ThreadInboxMessage, this.runtime.subjects.inbox, 'inbox');
    const traceparent = ctx.getTraceparent();
    await this.inbox.apply(message, {
      trace: traceparent ? { traceparent, tracestate: ctx.getTracestate() } : undefined,
      delivery: ctx.getDeliveryCount(),
    });
  }
}
