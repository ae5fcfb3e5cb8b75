import type { ThreadEvent } from '@ratchet/contracts';
import {
  ConcurrencyError,
  type ClaimItem,
  type CommittedPublisher,
  type OutboxMessage,
  type PendingMarks,
  type ThreadCommand,
  type ThreadState,
  type ThreadStore,
} from '@ratchet/domain';
import { inSpan, randomIds, SPAN } from '@ratchet/platform';
import { afterCommit, appendAttributes, describeSpan, type Decided } from './decision-telemetry';
import type { ThreadEngineDeps } from './engine-deps';
import { ThreadCache } from './thread-cache';
import { claimAndLoadCached, claimItem, countAdmissions, withBatchAdmissions } from './thread-claims';
import { decideInTx, type DecisionContext, type HandleMeta } from './thread-decision';

export interface HandleOutcome {
  status: 'applied' | 'duplicate' | 'no-op';
  events: ThreadEvent[];
}

/** Bounded: a thread under heavy contention is retried by redelivery, not by spinning here forever. */
const MAX_CONFLICT_RETRIES = 8;

/**
 * Published rows one decision's commit marks sent: at most 256 (the relay's own statements take 500),
 * and only when at least 64 wait, i.e. under load. Fewer are marked by the relay's statement beside the
 * decisions (off their path, without waiting for the WAL): taking a handful along puts an UPDATE into
 * every lone decision's statement for nothing (one run at a time, 30 or so wait per 20 ms mark delay).
 */
const MARKS_PER_COMMIT = 256;
const MARKS_AT_LEAST = 64;

/** One message waiting for a group commit. */
interface Pending {
  consumer: string;
  messageId: string;
  command: ThreadCommand;
  meta: HandleMeta;
  resolve: (outcome: HandleOutcome) => void;
  reject: (error: unknown) => void;
}

/** Conversations longer than this are not kept with a cached thread (a model call reads them). */
const CACHED_MESSAGES_MAX = 256;

/**
 * The orchestrator's one way to change a thread: claim the message in the inbox, load the projection
 * and any newer events, decide, then append + project + enqueue in the same transaction. Published only
 * after commit. A conflict with another worker reloads and decides again.
 *
 * Group commit: messages of different threads that arrive while a transaction is running are decided
 * together in the next one (one claim-and-load statement, one write statement, one commit for all),
 * so the cost of a round trip and a commit is shared under load. Nothing changes for a message: it is
 * acked only after the transaction holding its decision committed. If a group transaction fails for
 * any reason (a version conflict, a poison message, a crash of the database connection), nothing of it
 * was committed and every message of the group is handled again on its own, so one bad message cannot
 * fail the others.
 */
export class ThreadCommandHandler {
  private readonly queue: Pending[] = [];
  /** Threads and message ids in a running group: a second group must not take them. */
  private readonly busy = new Set<string>();
  private running = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly concurrency: number;
  private readonly cache: ThreadCache;
  private readonly decision: DecisionContext;

  private readonly store: ThreadStore<ThreadState>;
  private readonly relay: CommittedPublisher;
  private readonly marks: PendingMarks | undefined;

  constructor(deps: ThreadEngineDeps) {
    this.store = deps.store;
    this.relay = deps.relay;
    this.marks = deps.marks;
    this.decision = {
      subjects: deps.subjects,
      outgoing: deps.outgoing,
      toCommand: deps.toCommand,
      enrich: deps.enrich ?? (async (_state, command) => command),
      leaseOf: deps.leaseOf ?? (() => undefined),
      localTools: deps.localTools,
      ids: deps.ids ?? randomIds,
    };
    const group = deps.group ?? {};
    this.maxBatch = Math.max(1, group.maxBatch ?? 32);
    this.concurrency = Math.max(1, group.concurrency ?? 4);
    this.cache = new ThreadCache(Math.max(0, group.cachedThreads ?? 1024), CACHED_MESSAGES_MAX);
  }

  handle(consumer: string, messageId: string, command: ThreadCommand, meta: HandleMeta): Promise<HandleOutcome> {
    if (this.maxBatch === 1) return this.handleAlone(consumer, messageId, command, meta);
    return new Promise((resolve, reject) => {
      this.queue.push({ consumer, messageId, command, meta, resolve, reject });
      this.schedule();
    });
  }

  /** Starts a group on the next turn of the event loop, so messages that arrive together go together. */
  private schedule(): void {
    if (this.scheduled || this.running >= this.concurrency || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.running < this.concurrency && this.queue.length > 0) {
        const batch = this.takeBatch();
        if (batch.length === 0) break; // everything waiting belongs to a running group
        const keys = batch.flatMap(groupKeys);
        keys.forEach((k) => this.busy.add(k));
        this.running++;
        void this.runBatch(batch).finally(() => {
          keys.forEach((k) => this.busy.delete(k));
          this.running--;
          this.schedule();
        });
      }
    });
  }

  /**
   * Up to maxBatch messages in arrival order, at most one per thread and per message id, none of a
   * thread or id a running group holds (those wait, in order, for a later group).
   */
  private takeBatch(): Pending[] {
    const taken = new Set<string>();
    const batch: Pending[] = [];
    for (let i = 0; i < this.queue.length && batch.length < this.maxBatch;) {
      const p = this.queue[i]!;
      const keys = groupKeys(p);
      if (keys.some((k) => taken.has(k) || this.busy.has(k))) {
        // Whatever comes later for the same thread must not overtake this one.
        keys.forEach((k) => taken.add(k));
        i++;
        continue;
      }
      keys.forEach((k) => taken.add(k));
      if (!groupable(p)) {
        // Decided alone: its enrichment asks other services (up to seconds), which must not hold a group.
        if (batch.length > 0) {
          i++;
          continue;
        }
        this.queue.splice(i, 1);
        return [p];
      }
      batch.push(p);
      this.queue.splice(i, 1);
    }
    return batch;
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) {
      const [p] = batch as [Pending];
      await this.handleAlone(p.consumer, p.messageId, p.command, p.meta).then(p.resolve, p.reject);
      return;
    }
    let decided: Decided[];
    let marked: string[] = [];
    try {
      decided = await this.store.transaction(async (tx) => {
        const loaded = await claimAndLoadCached(
          tx,
          this.cache,
          batch.map((p) => this.claimItem(p.consumer, p.messageId, p.command)),
        );
        const out: Decided[] = [];
        const admitted = new Map<string, number>();
        for (let i = 0; i < batch.length; i++) {
          const p = batch[i]!;
          const claimed = withBatchAdmissions(loaded[i]!, p.command, admitted);
          out.push(
            await inSpan(SPAN.append, appendAttributes(p.consumer, p.command), async (span) => {
              const d = await decideInTx(this.decision, tx, p.messageId, p.command, p.meta, claimed);
              describeSpan(span, d);
              countAdmissions(admitted, p.command, d.events);
              return d;
            }),
          );
        }
        if (out.some((d) => d.status === 'applied')) marked = this.rideMarks(tx);
        return out;
      });
    } catch {
      this.giveBack(marked);
      // Nothing of the group was committed: each message on its own, with its own conflict retries and
      // its own error (a poison message fails alone), from what the database holds.
      for (const p of batch) this.cache.delete(p.command.tenantId, p.command.threadId);
      await Promise.all(
        batch.map((p) => this.handleAlone(p.consumer, p.messageId, p.command, p.meta).then(p.resolve, p.reject)),
      );
      return;
    }
    for (const d of decided) this.remember(d);
    for (const d of decided) afterCommit(d);
    // Not awaited: see handleAlone.
    void this.relay.publishCommitted(decided.flatMap(toPublish));
    decided.forEach((d, i) => batch[i]!.resolve({ status: d.status, events: d.events }));
  }

  /** One message in a transaction of its own, retried on a version conflict. */
  private async handleAlone(
    consumer: string,
    messageId: string,
    command: ThreadCommand,
    meta: HandleMeta,
  ): Promise<HandleOutcome> {
    for (let attempt = 1; ; attempt++) {
      let usedCache = false;
      let marked: string[] = [];
      try {
        const result = await inSpan(SPAN.append, appendAttributes(consumer, command), async (span) => {
          const committed = await this.store.transaction(async (tx) => {
            const [loaded] = await claimAndLoadCached(tx, this.cache, [this.claimItem(consumer, messageId, command)]);
            usedCache = loaded?.cached !== undefined;
            const d = await decideInTx(this.decision, tx, messageId, command, meta, loaded!);
            if (d.status === 'applied') marked = this.rideMarks(tx);
            return d;
          });
          describeSpan(span, committed);
          return committed;
        });
        this.remember(result);
        afterCommit(result);
        const publish = toPublish(result);
        if (publish.length > 0) {
          // Publishing right after commit keeps latency low; if this process dies first, the sweeper does it.
          // Not awaited: the message that caused them is acked, and the thread's next message decided, as
          // soon as the commit is done, without waiting for the bus to acknowledge the publishes. They are
          // issued now, in commit order, on one connection; the relay tracks them (a graceful stop waits).
          void this.relay.publishCommitted(publish);
        }
        return { status: result.status, events: result.events };
      } catch (error) {
        this.giveBack(marked);
        marked = [];
        this.cache.delete(command.tenantId, command.threadId);
        // Decided on a cached state that was no longer current (or the message was claimed before): decide
        // again from the database, whatever the error was; that attempt does not count as a conflict.
        if (usedCache) {
          attempt--;
          continue;
        }
        if (error instanceof ConcurrencyError && attempt < MAX_CONFLICT_RETRIES) continue;
        throw error;
      }
    }
  }

  /** What to claim and load for a message, with its thread's feed subject (for the rows left unpublished). */
  private claimItem(consumer: string, messageId: string, command: ThreadCommand): ClaimItem {
    return claimItem(consumer, messageId, command, this.decision.subjects.feed(command.tenantId, command.threadId));
  }

  /** A committing decision marks the relay's published rows with its own statement (ThreadTx.markSent). */
  private rideMarks(tx: { markSent(ids: readonly string[]): void }): string[] {
    const ids = this.marks?.take(MARKS_PER_COMMIT, MARKS_AT_LEAST) ?? [];
    if (ids.length > 0) tx.markSent(ids);
    return ids;
  }

  /** Marks a transaction took and did not commit: the relay marks them after all. */
  private giveBack(ids: string[]): void {
    if (ids.length > 0) this.marks?.giveBack(ids);
  }

  /** After a commit: the thread's state as committed, for its next message. */
  private remember(d: Decided): void {
    if (d.cache) this.cache.set(d.cache.tenantId, d.cache.threadId, d.cache.entry);
  }
}

/**
 * Whether a message may share a group transaction: a granted approval is re-checked against the gateway
 * and the approvals service while its transaction is open, which can take seconds when one is slow.
 */
function groupable(p: Pending): boolean {
  return p.command.type !== 'RecordApprovalDecision';
}

/** What two messages in flight at once must not share: their thread, their message id. */
function groupKeys(p: Pending): [string, string] {
  return [`thread:${p.command.tenantId}/${p.command.threadId}`, `message:${p.consumer}/${p.messageId}`];
}

/**
 * What a committed decision publishes: the rows of its thread's feed an earlier commit left unpublished
 * (a crash between commit and publish; the sweeper would send them seconds later, after this decision's),
 * then its own. In that order on one connection, so the feed stays in version order; a row another
 * publisher sent meanwhile is dropped as a duplicate by its Nats-Msg-Id.
 */
function toPublish(d: Decided): OutboxMessage[] {
  return d.unsent ? [...d.unsent, ...d.outbox] : d.outbox;
}
