import type { ThreadInboxMessage, TraceContext } from '@ratchet/contracts';
import type { Clock } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import type { KeyedSerializer } from './keyed-serializer';
import type { ThreadCommandHandler } from './thread-command.handler';
import { inboxToCommand } from './to-command';

export const INBOX_CONSUMER = 'orchestrator-inbox';

/**
 * Applies a thread-inbox message (a model or tool result, a cancel, an approval decision) to its
 * thread: the same path whether it came over the bus or from this process's own model worker, so the
 * inbox table deduplicates the two copies a crash can produce.
 */
export class ThreadInbox {
  constructor(
    private readonly threads: ThreadCommandHandler,
    private readonly serializer: KeyedSerializer,
    private readonly logger: Logger,
    private readonly worker: string,
    private readonly clock: Clock,
  ) {}

  apply(message: ThreadInboxMessage, meta: { trace?: TraceContext | undefined; delivery: number }): Promise<void> {
    // One thread's messages are decided one at a time, in arrival order: fewer version conflicts.
    return this.serializer.run(`${message.tenantId}/${message.threadId}`, async () => {
      const outcome = await this.threads.handle(
        INBOX_CONSUMER,
        message.messageId,
        inboxToCommand(message, this.clock.now().toISOString()),
        { correlationId: message.runId, trace: meta.trace, delivery: meta.delivery, worker: this.worker },
      );
      if (outcome.status === 'duplicate')
        this.logger.info({ messageId: message.messageId }, 'duplicate message ignored');
    });
  }
}
