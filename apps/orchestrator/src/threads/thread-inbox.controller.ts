import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { ThreadInboxMessage } from '@ratchet/contracts';
import { PoisonMessageError } from '@ratchet/domain';
import { JetStreamContext, ServiceRuntime } from '@ratchet/platform';
import { KeyedSerializer } from './keyed-serializer';
import { ThreadCommandHandler } from './thread-command.handler';
import { inboxToCommand } from './to-command';

export const INBOX_CONSUMER = 'orchestrator-inbox';

/** Model results, tool results and cancels for a thread, applied one message at a time. */
@Controller()
export class ThreadInboxController {
  constructor(
    @Inject(ThreadCommandHandler) private readonly threads: ThreadCommandHandler,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(KeyedSerializer) private readonly serializer: KeyedSerializer,
  ) {}

  @EventPattern(INBOX_CONSUMER)
  async onMessage(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const message = ThreadInboxMessage.parse(data);
    // One thread's messages are decided one at a time, in arrival order: fewer version conflicts.
    return this.serializer.run(`${message.tenantId}/${message.threadId}`, () => this.handleMessage(message, ctx));
  }

  private async handleMessage(message: ThreadInboxMessage, ctx: JetStreamContext): Promise<void> {
    const expected = this.runtime.subjects.inbox(message.tenantId, message.threadId);
    if (ctx.getSubject() !== expected) {
      throw new PoisonMessageError(
        `inbox message for ${message.tenantId}/${message.threadId} arrived on ${ctx.getSubject()}`,
        'inbox.subject_mismatch',
      );
    }
    const traceparent = ctx.getTraceparent();
    const outcome = await this.threads.handle(
      INBOX_CONSUMER,
      message.messageId,
      inboxToCommand(message, new Date().toISOString()),
      {
        correlationId: message.runId,
        trace: traceparent ? { traceparent, tracestate: ctx.getTracestate() } : undefined,
        delivery: ctx.getDeliveryCount(),
        worker: this.runtime.config.SERVICE_INSTANCE_ID,
      },
    );
    if (outcome.status === 'duplicate')
      this.runtime.logger.info({ messageId: message.messageId }, 'duplicate message ignored');
  }
}
