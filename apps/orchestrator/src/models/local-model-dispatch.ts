import { HEADERS, type ModelCallCommand } from '@ratchet/contracts';
import type { CommittedPublisher, OutboxMessage } from '@ratchet/domain';
import {
  contextFromHeaders,
  currentTraceContext,
  failpoint,
  inSpan,
  RunStoppedError,
  SPAN,
  type Logger,
} from '@ratchet/platform';
import type { MessageLease, ThreadInbox } from '@ratchet/engine';
import type { MemoryRecall } from './memory-recall';
import { waitUntil } from './abortable-wait';
import { LeaseLostError, type ModelCalls } from './model-calls';
import type { ModelWorker } from './model-worker';

/** What the dispatcher needs of the outbox relay. */
export interface LeasedOutbox extends CommittedPublisher {
  markDone(ids: readonly string[]): void;
  releaseLease(id: string, holder: string): Promise<void>;
}

export const LOCAL_MODEL_CONSUMER = 'model-worker (local)';

/**
 * Runs the model calls this process commits in this process, instead of sending each through
 * JetStream to a model worker and its result back through the thread inbox: two bus round trips less
 * per model call. Crash semantics do not change, because the command is still a committed outbox row:
 *
 * - the row is written leased to this process (`OutboxMessage.leaseMs`, `leasedBy`); `ModelCalls`
 *   renews the lease while the call runs (and waits out a retry's backoff), so the sweeper of no
 *   process publishes it meanwhile, and aborts the call when the lease is lost or the run stops;
 * - the result goes through the same inbox path as a result from the bus (`ThreadInbox`): inbox claim,
 *   decision, commit; only then is the row marked sent;
 * - if this process dies (or stops renewing) first, the lease runs out and a sweeper publishes the row
 *   with `Ratchet-Lease-Expired`; a model worker claims it from the bus as a retry (attempt recorded) —
 *   exactly what a redelivery after a dead bus worker does;
 * - when the call cannot be made or its result cannot be applied here, the lease is released and the
 *   command published to the bus at once, so the bus worker's rules (retries, poison handling) apply.
 *
 * At most `maxInFlight` local calls at once; beyond that, commands go to the bus like before.
 */
export class LocalModelDispatch implements CommittedPublisher {
  private readonly running = new Set<Promise<void>>();
  /** Local calls running now, by tenant. */
  private readonly byTenant = new Map<string, number>();
  private inbox: ThreadInbox | undefined;

  constructor(
    private readonly relay: LeasedOutbox,
    private readonly worker: ModelWorker,
    private readonly calls: ModelCalls,
    private readonly recall: MemoryRecall | undefined,
    private readonly logger: Logger,
    private readonly options: {
      maxInFlight: number;
      /**
       * Local calls one tenant may run at once (its share of `maxInFlight`); its further calls go to the
       * bus, where the model worker's fair shares apply. Default: all of them.
       */
      perTenant?: number;
      drainMs: number;
      now?: () => number;
    },
  ) {}

  /** The inbox results are applied to (set once wiring is done: the inbox needs the handler, which needs this). */
  deliverTo(inbox: ThreadInbox): void {
    this.inbox = inbox;
  }

  /**
   * The lease for a message this process would run itself: a model-call command, while there is room.
   * A retry waiting out its backoff is leased for the wait too.
   */
  leaseOf(message: OutboxMessage): MessageLease | undefined {
    if (!this.isModelCall(message) || !this.inbox || !this.hasRoom(message)) return undefined;
    const now = (this.options.now ?? Date.now)();
    const wait = message.notBefore ? Math.max(0, Date.parse(message.notBefore) - now) : 0;
    // The call runs here from the command in memory; the row is for a worker that takes it over after this
    // process died, which reads the conversation from the thread (committed with the row).
    const { messages, ...command } = message.payload as ModelCallCommand;
    const storedPayload: ModelCallCommand | undefined = messages
      ? { ...command, transcript: { messages: messages.length } }
      : undefined;
    return {
      leaseMs: this.calls.leaseMs + wait,
      holder: this.calls.holder,
      ...(storedPayload ? { storedPayload } : {}),
    };
  }

  publishCommitted(messages: readonly OutboxMessage[]): Promise<number> {
    const toBus: OutboxMessage[] = [];
    const released: Promise<unknown>[] = [];
    let local = 0;
    for (const m of messages) {
      if (m.leaseMs === undefined) {
        toBus.push(m);
      } else if (this.inbox && this.hasRoom(m)) {
        this.start(m);
        local++;
      } else {
        // Leased at decision time, but the room went meanwhile: the row becomes any worker's first.
        released.push(
          this.toBus(m).catch((e: unknown) =>
            this.logger.warn({ err: e, outboxId: m.id }, 'handing the model call to the bus failed; the sweeper will'),
          ),
        );
      }
    }
    return Promise.all([this.relay.publishCommitted(toBus), ...released]).then(([n]) => (n as number) + local);
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

  /** Room for one more local call: under `maxInFlight`, and under its tenant's share. */
  private hasRoom(message: OutboxMessage): boolean {
    if (this.running.size >= this.options.maxInFlight) return false;
    const perTenant = this.options.perTenant;
    return perTenant === undefined || (this.byTenant.get(tenantOf(message)) ?? 0) < perTenant;
  }

  private start(message: OutboxMessage): void {
    const tenant = tenantOf(message);
    this.byTenant.set(tenant, (this.byTenant.get(tenant) ?? 0) + 1);
    const run = this.run(message).finally(() => {
      this.running.delete(run);
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left > 0) this.byTenant.set(tenant, left);
      else this.byTenant.delete(tenant);
    });
    this.running.add(run);
  }

  private async toBus(message: OutboxMessage): Promise<void> {
    const { leaseMs: _lease, leasedBy: _holder, storedPayload: _stored, ...unleased } = message;
    await this.relay.releaseLease(message.id, this.calls.holder);
    await this.relay.publishCommitted([unleased]);
  }

  private async run(message: OutboxMessage): Promise<void> {
    // Built by this process's decision (outgoingMessages), not read from the bus: no need to parse it again.
    const command = message.payload as ModelCallCommand;
    try {
      const parent = contextFromHeaders(message.headers);
      await inSpan(
        SPAN.consume(LOCAL_MODEL_CONSUMER),
        {},
        () =>
          this.calls.run(
            { tenantId: command.tenantId, runId: command.runId, leasedRow: message.id },
            async (signal) => {
              await waitUntil(command.notBefore, signal);
              const result = await this.worker.call(command, signal, this.recall);
              // A call this process no longer holds has a new holder (or was replaced): its answer is not ours to give.
              if (signal.reason instanceof LeaseLostError) return;
              const trace = currentTraceContext();
              await this.inbox!.apply(result, { trace, delivery: 1 });
            },
          ),
        { parent },
      );
      failpoint('orchestrator.local-model.before-mark');
      this.relay.markDone([message.id]);
    } catch (error) {
      if (error instanceof LeaseLostError) return;
      if (error instanceof RunStoppedError) {
        // Stopped while it waited out its backoff: nothing was asked of the model; the run has ended.
        this.relay.markDone([message.id]);
        return;
      }
      // Not made or not applied here: the bus worker takes it now (its retry and poison rules apply).
      this.logger.warn({ err: error, outboxId: message.id }, 'local model call failed; the command goes to the bus');
      await this.toBus(message).catch((e: unknown) =>
        this.logger.warn(
          { err: e, outboxId: message.id },
          'handing the model call to the bus failed; the sweeper will',
        ),
      );
    }
  }
}

function tenantOf(message: OutboxMessage): string {
  return (message.payload as ModelCallCommand).tenantId;
}
