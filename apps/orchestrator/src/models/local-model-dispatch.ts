import { HEADERS, type ModelCallCommand } from '@ratchet/contracts';
import type { CommittedPublisher, OutboxMessage } from '@ratchet/domain';
import { contextFromHeaders, currentTraceContext, failpoint, inSpan, SPAN, type Logger } from '@ratchet/platform';
import type { ThreadInbox } from '../threads/thread-inbox';
import type { MemoryRecall } from './memory-recall';
import type { ModelWorker } from './model-worker';

/** What the dispatcher needs of the outbox relay. */
export interface LeasedOutbox extends CommittedPublisher {
  markDone(ids: readonly string[]): void;
  renewLease(id: string, leaseMs: number): Promise<void>;
}

export const LOCAL_MODEL_CONSUMER = 'model-worker (local)';

/**
 * Runs the model calls this process commits in this process, instead of sending each through
 * JetStream to a model worker and its result back through the thread inbox: two bus round trips less
 * per model call. Crash semantics do not change, because the command is still a committed outbox row:
 *
 * - the row is written leased to this process for `leaseMs` (`OutboxMessage.leaseMs`); the lease is
 *   renewed every `leaseMs / 3` while the call runs, so the sweeper of no process publishes it meanwhile;
 * - the result goes through the same inbox path as a result from the bus (`ThreadInbox`): inbox claim,
 *   decision, commit; only then is the row marked sent;
 * - if this process dies (or stops renewing) first, the lease runs out and a sweeper publishes the row
 *   with `Ratchet-Lease-Expired`; a model worker takes it from the bus as a retry (attempt recorded) —
 *   exactly what a redelivery after a dead bus worker does;
 * - when the call cannot be made or its result cannot be applied here, the command is published to the
 *   bus at once, so the bus worker's rules (retries, poison handling) apply.
 *
 * At most `maxInFlight` local calls at once; beyond that, commands go to the bus like before.
 */
export class LocalModelDispatch implements CommittedPublisher {
  private readonly running = new Set<Promise<void>>();
  private inbox: ThreadInbox | undefined;

  constructor(
    private readonly relay: LeasedOutbox,
    private readonly worker: ModelWorker,
    private readonly recall: MemoryRecall | undefined,
    private readonly logger: Logger,
    private readonly options: { leaseMs: number; maxInFlight: number; drainMs: number },
  ) {}

  /** The inbox results are applied to (set once wiring is done: the inbox needs the handler, which needs this). */
  deliverTo(inbox: ThreadInbox): void {
    this.inbox = inbox;
  }

  /** The lease for a message this process would run itself: model-call commands. */
  leaseOf(message: OutboxMessage): number | undefined {
    return this.isModelCall(message) ? this.options.leaseMs : undefined;
  }

  publishCommitted(messages: readonly OutboxMessage[]): Promise<number> {
    const toBus: OutboxMessage[] = [];
    let local = 0;
    for (const m of messages) {
      if (m.leaseMs !== undefined && this.inbox && this.running.size < this.options.maxInFlight) {
        this.start(m);
        local++;
      } else {
        toBus.push(m);
      }
    }
    return this.relay.publishCommitted(toBus).then((n) => n + local);
  }

  /** Local calls running now. */
  get active(): number {
    return this.running.size;
  }

  /** Waits up to `drainMs` for local calls to finish; an unfinished one is retried once its lease runs out. */
  async drain(timeoutMs = this.options.drainMs): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      Promise.allSettled([...this.running]).then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    return done;
  }

  private isModelCall(message: OutboxMessage): boolean {
    return message.headers[HEADERS.messageType] === 'model.call';
  }

  private start(message: OutboxMessage): void {
    const run = this.run(message).finally(() => this.running.delete(run));
    this.running.add(run);
  }

  private async run(message: OutboxMessage): Promise<void> {
    const { leaseMs } = this.options;
    const renew = setInterval(() => void this.relay.renewLease(message.id, leaseMs), Math.max(100, leaseMs / 3));
    try {
      // Built by this process's decision (outgoingMessages), not read from the bus: no need to parse it again.
      const command = message.payload as ModelCallCommand;
      const parent = contextFromHeaders(message.headers);
      await inSpan(
        SPAN.consume(LOCAL_MODEL_CONSUMER),
        {},
        async () => {
          const result = await this.worker.call(command, undefined, this.recall);
          const trace = currentTraceContext();
          await this.inbox!.apply(result, { trace, delivery: 1 });
        },
        { parent },
      );
      failpoint('orchestrator.local-model.before-mark');
      this.relay.markDone([message.id]);
    } catch (error) {
      // Not made or not applied here: the bus worker takes it now (its retry and poison rules apply).
      this.logger.warn({ err: error, outboxId: message.id }, 'local model call failed; the command goes to the bus');
      await this.relay.publishCommitted([message]);
    } finally {
      clearInterval(renew);
    }
  }
}
