import type { MessagePublisher } from '@ratchet/adapters';
import { HEADERS } from '@ratchet/contracts';
import { SpanKind } from '@opentelemetry/api';
import { failpoint } from '../failpoints';
import { ATTR, contextFromHeaders, inSpan, SPAN } from '../telemetry';
import {
  TransientError,
  type OutboxMessage,
  type OutboxStore,
  type PendingMarks,
  type PendingOutboxMessage,
} from '@ratchet/domain';

export interface OutboxRelayOptions {
  /** Sweeper period, ms. Default 500. */
  intervalMs?: number;
  /** Rows per store transaction. Default 100. */
  batchSize?: number;
  /** Batches per sweep at most, so one sweep cannot hold the loop forever under a flood. Default 20. */
  maxBatchesPerSweep?: number;
  /** Sent rows are deleted once older than this, ms. Default 1 h. */
  retentionMs?: number;
  /** How often pruning runs, ms. Default 60 s. */
  pruneEveryMs?: number;
  /**
   * The sweeper leaves rows younger than this alone, ms: their committing handler publishes them itself
   * (`publishCommitted`), and a sweep racing it would only publish them twice. Default 2000.
   */
  sweepGraceMs?: number;
  /**
   * How long published rows wait to be marked sent, ms, so the marks of several commits share one
   * statement even when commits come one at a time. A row is marked at most this much later (the
   * sweeper leaves rows alone for `sweepGraceMs` anyway); a stop marks at once. Default 20; 0 = at once.
   */
  markDelayMs?: number;
  /** Failures the relay absorbs (the sweeper retries): for logs. Default console.warn. */
  onError?: (error: unknown, what: string) => void;
}

/**
 * Moves committed outbox rows to JetStream. `publishCommitted(messages)` right after a commit keeps
 * latency low: it publishes what the handler just committed from memory, pipelined, and marks the rows
 * sent in the background, many commits' rows in one statement. The sweeper (`start()`) relays whatever
 * a crash, a failed publish or a lost race left behind, once it is older than `sweepGraceMs`. Each row
 * is published with `Nats-Msg-Id` = its id, so a publish repeated after a crash (published, then died
 * before marking it sent) is dropped by JetStream's duplicate window, and after that by the
 * consumer's inbox table. `flush(ids)` and sweeps lock rows with FOR UPDATE SKIP LOCKED, so those two
 * never hand a row to two publishers at once.
 */
export class OutboxRelay implements PendingMarks {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxBatches: number;
  private readonly retentionMs: number;
  private readonly pruneEveryMs: number;
  private readonly sweepGraceMs: number;
  private readonly markDelayMs: number;
  /** Ends the current mark delay early (a stop). */
  private markNow: (() => void) | undefined;
  private readonly onError: (error: unknown, what: string) => void;
  /** Published rows waiting to be marked sent, and the marking in progress (one at a time). */
  private unmarked: string[] = [];
  private marking: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private lastPrune = 0;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly store: OutboxStore,
    private readonly publisher: MessagePublisher,
    options: OutboxRelayOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 500;
    this.batchSize = Math.max(1, options.batchSize ?? 100);
    this.maxBatches = Math.max(1, options.maxBatchesPerSweep ?? 20);
    this.retentionMs = options.retentionMs ?? 60 * 60_000;
    this.pruneEveryMs = options.pruneEveryMs ?? 60_000;
    this.sweepGraceMs = Math.max(0, options.sweepGraceMs ?? 2000);
    this.markDelayMs = Math.max(0, options.markDelayMs ?? 20);
    this.onError = options.onError ?? ((error, what) => console.warn(`[outbox relay] ${what}:`, error));
  }

  /**
   * Publishes the given rows (those the caller just committed) or, without ids, every unsent row.
   * Never rejects: the commit already happened, and whatever could not be published now is the
   * sweeper's job. Resolves with how many rows were sent.
   */
  flush(ids?: readonly string[]): Promise<number> {
    return this.track(
      this.relay(ids).catch((error: unknown) => {
        this.onError(error, 'flush failed; the sweeper will retry');
        return 0;
      }),
    );
  }

  /**
   * Publishes messages the caller has just committed to the outbox, in order (pipelined on one
   * connection), without reading them back; the rows are marked sent afterwards in the background,
   * batched with other commits'. Call it only after the commit. Never rejects: what could not be
   * published now, or is left unmarked by a crash, the sweeper publishes (again) later. Resolves with
   * how many were published.
   */
  publishCommitted(all: readonly OutboxMessage[]): Promise<number> {
    // A delayed message (a retry's backoff) is the sweeper's: it publishes the row once it is due.
    const now = Date.now();
    const messages = all.filter((m) => m.notBefore === undefined || Date.parse(m.notBefore) <= now);
    if (messages.length === 0) return Promise.resolve(0);
    const publish = this.publishInOrder();
    const createdAt = new Date();
    return this.track(
      Promise.allSettled(messages.map((m) => publish({ ...m, createdAt, attempts: 0 }))).then((outcomes) => {
        const sent = messages.filter((_, i) => outcomes[i]?.status === 'fulfilled').map((m) => m.id);
        this.mark(sent);
        return sent.length;
      }),
    );
  }

  /**
   * Published rows waiting to be marked, for a transaction that writes anyway to mark with its own
   * commit (`ThreadTx.markSent`); what it takes the relay no longer marks itself.
   */
  take(max: number, atLeast = 1): string[] {
    return this.unmarked.length < Math.max(1, atLeast) ? [] : this.unmarked.splice(0, max);
  }

  /** Ids a transaction took and did not commit: marked like any others. */
  giveBack(ids: readonly string[]): void {
    this.mark(ids);
  }

  /**
   * Marks rows sent whose work this process did itself instead of publishing them (leased rows, see
   * `OutboxMessage.leaseMs`), once that work's result is committed; batched like `publishCommitted`'s.
   */
  markDone(ids: readonly string[]): void {
    this.mark(ids);
  }

  /** Ends this process's lease on a row whose work goes to the bus instead. Rejects when it cannot. */
  releaseLease(id: string, holder: string): Promise<void> {
    return this.store.releaseLease(id, holder);
  }

  /** Extends a leased row's lease while its work still runs. Never rejects (a lost renewal risks only a retry). */
  renewLease(id: string, leaseMs: number): Promise<void> {
    return this.store
      .renewLease(id, leaseMs)
      .catch((error: unknown) => this.onError(error, `renewing the lease of outbox row ${id} failed`));
  }

  /** One sweep: relays leftovers, and prunes old sent rows when it is time. Rejects on store failure. */
  async sweep(): Promise<number> {
    const sent = await this.relay(undefined, this.sweepGraceMs);
    if (Date.now() - this.lastPrune >= this.pruneEveryMs) {
      this.lastPrune = Date.now();
      await this.store.prune(new Date(Date.now() - this.retentionMs));
    }
    return sent;
  }

  /** Starts the sweeper; it runs one sweep at a time, `intervalMs` after the previous one ended. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const tick = async (): Promise<void> => {
      try {
        await this.track(this.sweep());
      } catch (error) {
        this.onError(error, 'sweep failed; retrying next tick');
      }
      if (this.running) this.timer = setTimeout(() => void tick(), this.intervalMs);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  /** Stops the sweeper and waits for running flushes and sweeps (so their rows get marked sent). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.markNow?.();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Group marking: ids pile up for `markDelayMs`, and while one UPDATE runs for the next, so marks cost far
   * less than one statement per commit.
   */
  private mark(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.unmarked.push(...ids);
    if (!this.marking) this.marking = this.track(this.markLoop());
  }

  private async markLoop(): Promise<void> {
    try {
      if (this.markDelayMs > 0) {
        // Let the marks of the next commits join this statement.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.markDelayMs);
          this.markNow = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.markNow = undefined;
      }
      while (this.unmarked.length > 0) {
        const batch = this.unmarked.splice(0, 500);
        // Left unmarked on failure: the sweeper publishes those rows again (deduplicated) and marks them.
        await this.store.markSent(batch).catch((error: unknown) => this.onError(error, 'marking rows sent failed'));
      }
    } finally {
      // In the same tick as the last emptiness check, so no id pushed after it is stranded.
      this.marking = undefined;
    }
  }

  private async relay(ids: readonly string[] | undefined, minAgeMs = 0): Promise<number> {
    if (ids) {
      let sent = 0;
      for (let i = 0; i < ids.length; i += this.batchSize) {
        const chunk = ids.slice(i, i + this.batchSize);
        sent += await this.store.relayBatch(chunk.length, this.publishInOrder(), [...chunk]);
      }
      return sent;
    }
    let sent = 0;
    for (let batch = 0; batch < this.maxBatches; batch++) {
      const n = await this.store.relayBatch(this.batchSize, this.publishInOrder(), undefined, minAgeMs);
      sent += n;
      if (n < this.batchSize) break;
    }
    return sent;
  }

  /**
   * A publish function for one batch that stops at the first transient failure (bus unreachable), so
   * a bus that is down is not hammered row by row. The store pipelines a batch's publishes on one
   * connection (the server receives them oldest first); a row that fails while a later one succeeded
   * is published again by the sweeper, so the bus may see it late, never not at all. A failure specific to one row (payload too big, bad subject) skips only that row, so a
   * row that can never be published does not block the whole outbox behind it; its growing
   * `attempts` shows it in `ratchet outbox`.
   */
  private publishInOrder(): (message: PendingOutboxMessage) => Promise<void> {
    let unreachable: unknown;
    return async (message) => {
      if (unreachable !== undefined) {
        throw new TransientError(
          `outbox row ${message.id} skipped: the bus failed earlier in this batch`,
          'outbox.skipped',
          { cause: unreachable },
        );
      }
      try {
        // A producer span in the message's own trace (the run's), so the hand-off shows in it.
        await inSpan(
          SPAN.outboxPublish,
          {
            [ATTR.messagingSystem]: 'nats',
            [ATTR.messagingDestination]: message.subject,
            [ATTR.messagingMessageId]: message.id,
            [ATTR.messageKind]: message.headers[HEADERS.messageType] ?? '',
            [ATTR.attempt]: message.attempts + 1,
          },
          () =>
            this.publisher.publish(message.subject, message.payload, {
              msgId: message.id,
              headers: message.leaseExpired ? { ...message.headers, [HEADERS.leaseExpired]: '1' } : message.headers,
            }),
          { parent: contextFromHeaders(message.headers), kind: SpanKind.PRODUCER },
        );
        failpoint(`outbox.after-publish.${message.headers[HEADERS.messageType] ?? 'message'}`);
      } catch (error) {
        if (error instanceof TransientError) unreachable = error;
        else this.onError(error, `outbox row ${message.id} (${message.subject}) cannot be published`);
        throw error;
      }
    };
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }
}
