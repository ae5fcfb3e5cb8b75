import type { ThreadInboxMessage, TraceContext } from '@ratchet/contracts';
import type { Clock } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import type { InboxToCommand } from './engine-deps';
import type { KeyedSerializer } from './keyed-serializer';
import type { ThreadCommandHandler } from './thread-command.handler';

export const INBOX_CONSUMER = 'orchestrator-inbox';

/**
 * Applies a thread-inbox message (a model or tool result, a cancel, an approval decision) to its
 * thread: the same path whether it came over the bus or from this process's own model worker, so the
 * inbox table deduplicates the two copies a crash can produce.
 */
export class ThreadInbox {
  private readonly threads: ThreadCommandHandler;
  private readonly serializer: KeyedSerializer;
  private readonly logger: Logger;
  private readonly worker: string;
  private readonly clock: Clock;
  private readonly toCommand: InboxToCommand;

  constructor(options: {
    threads: ThreadCommandHandler;
    serializer: KeyedSerializer;
    logger: Logger;
    /** This process, named on a resumed decision. */
    worker: string;
    clock: Clock;
    toCommand: InboxToCommand;
  }) {
    this.threads = options.threads;
    this.serializer = options.serializer;
    this.logger = options.logger;
    this.worker = options.worker;
    this.clock = options.clock;
    this.toCommand = options.toCommand;
  }

  apply(message: ThreadInboxMessage, meta: { trace?: TraceContext | undefined; delivery: number }): Promise<void> {
    // One thread's messages are decided one at a time, in arrival order: fewer version conflicts.
    return this.serializer.run(`${message.tenantId}/${message.threadId}`, async () => {
      const outcome = await this.threads.handle(
        INBOX_CONSUMER,
        message.messageId,
        this.toCommand(message, this.clock.now().toISOString()),
        { correlationId: message.runId, trace: meta.trace, delivery: meta.delivery, worker: this.worker },
      );
      if (outcome.status === 'duplicate')
        this.logger.info({ messageId: message.messageId }, 'duplicate message ignored');
    });
  }
}
