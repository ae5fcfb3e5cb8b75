import type { ChatMessage, RunSlot, ThreadEvent } from '@ratchet/contracts';
import type { KnownRequest } from '../thread/thread.commands';
import type { RunSummary } from '../thread/thread.state';

/** A message a state change must cause; relayed to JetStream with `Nats-Msg-Id` = `id`. */
export interface OutboxMessage {
  id: string;
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
  /**
   * Set when the committing process executes this message itself instead of publishing it (a model call
   * run in-process): the row is leased to it for this long, and the sweeper publishes it only once the
   * lease has run out (renewed while the work runs; marked sent when its result is committed).
   */
  leaseMs?: number | undefined;
  /** The process the lease is held by (it alone renews it). */
  leasedBy?: string | undefined;
  /**
   * Not to be published before this time (a delayed retry): the sweeper leaves the row alone until then.
   * Exclusive with `leaseMs`.
   */
  notBefore?: string | undefined;
  /**
   * What the row holds, when it is not `payload`: a model call this process runs itself keeps its
   * conversation in memory, and its row names only how many messages it has (the thread's conversation,
   * committed with it, holds them), so a step does not write the whole conversation again.
   */
  storedPayload?: unknown;
  /**
   * The payload is a decision's events (the thread's feed, a `FeedDecision`): a store that seals the log's
   * content stores and publishes it sealed as its row is, replacing `payload` with the decision whose
   * events are sealed as the log stores them.
   */
  sealAs?: 'decision' | undefined;
}

export interface PendingOutboxMessage extends OutboxMessage {
  createdAt: Date;
  attempts: number;
  /** The row was leased to a process that never finished it (it died or stopped renewing): a retry. */
  leaseExpired?: boolean | undefined;
}

/** What a projection store keeps for a thread: the fold of its log up to `version`. */
export interface ThreadProjectionRow<S> {
  tenantId: string;
  threadId: string;
  version: number;
  state: S;
}

/** Row of the `runs` projection: one per run, for queries (status, agent, request id). */
export interface RunRow extends RunSummary {
  tenantId: string;
  threadId: string;
  version: number;
}

/**
 * Messages of a thread's conversation to store (`thread_messages`), numbered from 1 in the order of the
 * conversation: `messages[0]` is number `from`. A decision appends the messages its events add (a number
 * taken already is a conflict, like an event version); a rebuild writes the whole conversation (`whole`:
 * rows are overwritten and rows past its end removed).
 */
export interface ThreadMessages {
  from: number;
  messages: readonly ChatMessage[];
  whole?: boolean | undefined;
}

/**
 * Everything one handler does for one message, inside one database transaction: claim the message in
 * the inbox, read the thread, append the events it caused, save the projections, enqueue the messages
 * it caused. Either all of it commits or none of it does.
 */
/** A message to claim for a consumer, with the thread it is for (see `ThreadTx.claimAndLoadMany`). */
export interface ClaimItem {
  consumer: string;
  messageId: string;
  tenantId: string;
  threadId: string;
  /** A run request's id: the claim also finds the tenant's run that has it. */
  requestId?: string | undefined;
  /**
   * With a run request under a bound on the tenant's runs in flight: the claim also counts the tenant's
   * queued and running runs (the `runs` rows), up to this many (a count past the bound says nothing more).
   */
  activeRunsUpTo?: number | undefined;
  /** Likewise under a bound on the tenant's waiting runs: the claim counts its runs waiting for a human, up to this many. */
  waitingRunsUpTo?: number | undefined;
  /**
   * With a run request (or an admission) holding concurrency keys: the claim counts the tenant's runs in
   * flight holding each key, up to its max, after taking each key's lock (ADR 0045).
   */
  slotsUpTo?: readonly RunSlot[] | undefined;
  /**
   * A throttled run request or admission: the claim takes the key's lock (after the tenant's and the slots')
   * and counts the tenant's runs with `key` that started after `since` (at any time after, so a start
   * committed with a later clock is counted too), up to `limit`.
   */
  throttleUpTo?: { key: string; limit: number; since: string } | undefined;
  /**
   * A debounced run request or admission: the claim takes the debounce key's lock and finds the tenant's
   * latest queued run of `key` (by request time).
   */
  debounceOf?: string | undefined;
  /**
   * The thread's feed subject: the claim also returns the outbox rows on it that are not marked sent yet
   * (`unsent`), so a decision that follows a crash publishes the decisions before it first and the feed
   * stays in version order.
   */
  unsentOn?: string | undefined;
}

/** What a handler needs at the start of its transaction for one claimed message. */
export interface ClaimedThread<S> {
  /** False when the message was processed before (a redelivery): nothing else matters then. */
  claimed: boolean;
  projection: ThreadProjectionRow<S> | undefined;
  /** Events newer than the projection (all of them when there is none), in order. */
  newer: ThreadEvent[];
  /** With a `requestId` in the claim: the tenant's run that has that request id, if any (the `runs` rows). */
  known?: KnownRequest | undefined;
  /** With `activeRunsUpTo` in the claim: the tenant's queued and running runs (not waiting), counted up to that many. */
  activeRuns?: number | undefined;
  /** With `waitingRunsUpTo` in the claim: the tenant's runs waiting for a human, counted up to that many. */
  waitingRuns?: number | undefined;
  /** With `slotsUpTo` in the claim: per key, the tenant's runs in flight holding it, counted up to its max. */
  slotRuns?: Record<string, number> | undefined;
  /** With `throttleUpTo` in the claim: the tenant's runs with its key that started after its `since`, up to its limit. */
  throttleStarts?: number | undefined;
  /** With `debounceOf` in the claim: the tenant's queued run of that key requested last, if any. */
  debounceLatest?: string | undefined;
  /** With `unsentOn` in the claim: the outbox rows on that subject not marked sent, oldest first, as stored. */
  unsent?: OutboxMessage[] | undefined;
}

export interface ThreadTx<S> {
  /** Records `messageId` as processed by `consumer`; false when it already was (a redelivery). */
  claimInbox(consumer: string, messageId: string): Promise<boolean>;
  /**
   * For messages of (usually) different threads, in input order: the claim, the projection, the newer
   * events and (for a run request) the known request — what `claimInbox`, `loadProjection`, `loadEvents`
   * and `findRequest` would say, in one round trip where the store can.
   */
  claimAndLoadMany(items: readonly ClaimItem[]): Promise<ClaimedThread<S>[]>;
  /**
   * Claims a message with the transaction's writes, for a decision on a state the caller already had at
   * `version` (it did not read the thread): the commit fails — ConcurrencyError when the thread's
   * projection moved past `version`, an error when the message was claimed before — and nothing of the
   * transaction is kept.
   */
  claimOnWrite(consumer: string, messageId: string, tenantId: string, threadId: string, version: number): void;
  /** The thread's projection (or undefined for a thread with no events) without newer events. */
  loadProjection(tenantId: string, threadId: string): Promise<ThreadProjectionRow<S> | undefined>;
  /** Events with version > afterVersion, in order. */
  loadEvents(tenantId: string, threadId: string, afterVersion: number): Promise<ThreadEvent[]>;
  /**
   * Appends events whose versions must continue `expectedVersion` without a gap.
   * Throws ConcurrencyError when another writer appended first.
   */
  appendEvents(tenantId: string, threadId: string, expectedVersion: number, events: ThreadEvent[]): Promise<void>;
  /** Writes the projection: the state row, the `runs` rows and the conversation's new messages. */
  saveProjection(row: ThreadProjectionRow<S>, runs: RunRow[], messages?: ThreadMessages): Promise<void>;
  /**
   * Messages 1..`count` of the thread's conversation, oldest first. Throws when fewer are stored (the
   * messages projection is behind the log: rebuild it).
   */
  loadMessages(tenantId: string, threadId: string, count: number): Promise<ChatMessage[]>;
  /** The run of the tenant that has this request id, on any thread (the `runs` rows keep every run ever accepted). */
  findRequest(tenantId: string, requestId: string): Promise<KnownRequest | undefined>;
  enqueue(messages: OutboxMessage[]): Promise<void>;
  /**
   * Marks outbox rows sent (rows published after an earlier commit) with this transaction's writes: they
   * ride in its statement and its commit instead of a statement and a commit of their own. Only for a
   * transaction that writes; when it fails, the marks fail with it (give them back to the relay).
   */
  markSent(ids: readonly string[]): void;
}

/**
 * Rows published straight after their commit and waiting to be marked sent (the outbox relay's), which a
 * transaction that writes anyway can take along (`ThreadTx.markSent`). What is not taken is marked by the
 * relay on its own after a short delay; what a failed transaction took is given back.
 */
export interface PendingMarks {
  /**
   * Up to `max` ids waiting to be marked, removed from the wait; none unless at least `atLeast` wait (a
   * few marks cost a commit that waits for them more than the relay's own statement beside it).
   */
  take(max: number, atLeast?: number): string[];
  /** Ids taken by a transaction that did not commit: marked later after all. */
  giveBack(ids: readonly string[]): void;
}

export interface ThreadStore<S> {
  /** Runs `work` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: ThreadTx<S>) => Promise<T>): Promise<T>;
  /** Read-only: every event of a thread from `afterVersion` on. */
  readEvents(tenantId: string, threadId: string, afterVersion?: number): Promise<ThreadEvent[]>;
  readProjection(tenantId: string, threadId: string): Promise<ThreadProjectionRow<S> | undefined>;
  /** Read-only: every stored message of a thread's conversation, oldest first. */
  readMessages(tenantId: string, threadId: string): Promise<ChatMessage[]>;
}

/** What a handler calls right after its commit: publish these rows now; the sweeper covers what it misses. */
export interface CommittedPublisher {
  /** Never rejects; resolves with how many were published. */
  publishCommitted(messages: readonly OutboxMessage[]): Promise<number>;
}

/** The relay's view of an outbox table. */
export interface OutboxStore {
  /** Locks up to `limit` unsent rows (FOR UPDATE SKIP LOCKED), oldest first, and hands them to `publish`;
   *  rows whose publish resolved are marked sent in the same transaction. Returns how many were sent.
   *  `minAgeMs` leaves younger rows alone (the committing handler is publishing those itself), except rows
   *  held back to a later time (a delayed or leased row, `availableAt` after its creation), which no
   *  handler publishes at its commit: those go as soon as they are due. Without
   *  `ids`, rows under a running lease are left alone too. */
  relayBatch(
    limit: number,
    publish: (message: PendingOutboxMessage) => Promise<void>,
    ids?: string[],
    minAgeMs?: number,
  ): Promise<number>;
  /** Marks rows sent that were published straight after their commit (one statement for the batch). */
  markSent(ids: readonly string[]): Promise<void>;
  /** Extends the lease of an unsent leased row to `leaseMs` from now (the work it stands for still runs). */
  renewLease(id: string, leaseMs: number): Promise<void>;
  /** Ends the lease `holder` has on an unsent row (its work goes to the bus instead): the row is then any worker's. */
  releaseLease(id: string, holder: string): Promise<void>;
  /** Deletes rows sent before `olderThan`; returns how many. */
  prune(olderThan: Date): Promise<number>;
  /** Unsent rows and the age of the oldest, for lag metrics and `ratchet outbox`. */
  lag(): Promise<{ unsent: number; oldestCreatedAt: Date | null }>;
}
