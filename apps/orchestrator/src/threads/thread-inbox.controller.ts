import { Controller, Inject } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { ThreadInboxMessage } from '@ratchet/contracts';
import { ConsumesOnItsSubject, JetStreamContext } from '@ratchet/platform';
import { INBOX_CONSUMER, ThreadInbox } from '@ratchet/engine';

export { INBOX_CONSUMER };

/** Model results, tool results and cancels for a thread, applied one message at a time. */
@Controller()
export class ThreadInboxController {
  constructor(@Inject(ThreadInbox) private readonly inbox: ThreadInbox) {}

  @ConsumesOnItsSubject(INBOX_CONSUMER, ThreadInboxMessage, (s) => s.inbox, 'inbox')
  async onMessage(message: ThreadInboxMessage, @Ctx() ctx: JetStreamContext): Promise<void> {
    const traceparent = ctx.getTraceparent();
    await this.inbox.apply(message, {
      trace: traceparent ? { traceparent, tracestate: ctx.getTracestate() } : undefined,
      delivery: ctx.getDeliveryCount(),
    });
  }
}
