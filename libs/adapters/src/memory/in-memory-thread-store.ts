import type { ChatMessage, ThreadEvent } from '@ratchet/contracts';
import {
  ConcurrencyError,
  InvariantError,
  type ClaimedThread,
  type OutboxMessage,
  type OutboxStore,
  type PendingOutboxMessage,
  type RunRow,
  type ThreadMessages,
  type ThreadProjectionRow,
  type ThreadStore,
  type ThreadTx,
} from '@ratchet/domain';
import { KeyedLocks } from './keyed-locks';
import { countRuns, latestQueued, type RunCount } from './run-counts';

interface OutboxEntry extends PendingOutboxMessage {
  sentAt: Date | null;
  /** Leased rows only: when the sweeper may take it. */
  availableAt: Date | null;
  holder: string | null;
}

/** Copies as Postgres would store them (jsonb): no shared references, no undefined, no class instances. */
function jsonClone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const threadKey = (tenantId: string, threadId: string) => `${tenantId}\u0000${threadId}`;
const inboxKey = (consumer: string, messageId: string) => `${consumer}\u0000${messageId}`;

/**
 * ThreadStore + OutboxStore in memory, for fast unit tests, with the Postgres adapter's semantics:
 * writes are buffered and applied at commit, all or nothing; a version clash is a ConcurrencyError
 * (at append when the clash is already committed, else at commit); an inbox claim is held by its
 * transaction until it commits (kept) or rolls back (released). Values are deep-copied in and out,
 * as a database would.
 */
export class InMemoryThreadStore<S> implements ThreadStore<S>, OutboxStore {
  private readonly events = new Map<string, ThreadEvent[]>();
  private readonly eventIds = new Set<string>();
  private readonly projections = new Map<string, ThreadProjectionRow<S>>();
  private readonly runs = new Map<string, RunRow>();
  private readonly messages = new Map<string, ChatMessage[]>();
  private readonly inbox = new Set<string>();
  private readonly claimed = new Set<string>();
  private readonly outbox: OutboxEntry[] = [];
  private readonly locked = new Set<string>();
  private readonly tenantLocks = new KeyedLocks();

  async transaction<T>(work: (tx: ThreadTx<S>) => Promise<T>): Promise<T> {
    const appends = new Map<string, { expectedVersion: number; events: ThreadEvent[] }>();
    const projections = new Map<string, ThreadProjectionRow<S>>();
    const runs = new Map<string, RunRow>();
    const messageWrites = new Map<string, ThreadMessages[]>();
    const claims: string[] = [];
    /** Claims made with the writes: each must be new at commit, and its thread still at `version`. */
    const guarded: Array<{ inbox: string; thread: string; threadId: string; version: number }> = [];
    const enqueued: OutboxMessage[] = [];
    const marks: string[] = [];
    /** Tenants whose run admissions this transaction holds (as Postgres's advisory lock per tenant, ADR 0045). */
    const held = new Map<string, () => void>();
    const release = () => {
      claims.forEach((k) => this.claimed.delete(k));
      for (const unlock of held.values()) unlock();
      held.clear();
    };

    const tx: ThreadTx<S> = {
      claimInbox: async (consumer, messageId) => {
        const key = inboxKey(consumer, messageId);
        if (this.inbox.has(key) || this.claimed.has(key)) return false;
        this.claimed.add(key);
        claims.push(key);
        return true;
      },
      claimAndLoadMany: async (items) => {
        // A lock per tenant under a bound and per (tenant, key) held by a run, in one order (ADR 0045).
        const bounded = new Set<string>();
        for (const i of items) {
          if (i.activeRunsUpTo !== undefined) bounded.add(i.tenantId);
          for (const s of i.slotsUpTo ?? []) bounded.add(`${i.tenantId}:slot:${s.key}`);
          if (i.throttleUpTo) bounded.add(`${i.tenantId}:throttle:${i.throttleUpTo.key}`);
          if (i.debounceOf !== undefined) bounded.add(`${i.tenantId}:debounce:${i.debounceOf}`);
        }
        for (const lock of [...bounded].sort())
          if (!held.has(lock)) held.set(lock, await this.tenantLocks.acquire(lock));
        const out: ClaimedThread<S>[] = [];
        for (const item of items) {
          const { consumer, messageId, tenantId, threadId, requestId, activeRunsUpTo, waitingRunsUpTo, unsentOn } =
            item;
          const slots = item.slotsUpTo && item.slotsUpTo.length > 0 ? item.slotsUpTo : undefined;
          const unsent = unsentOn === undefined ? {} : { unsent: this.unsentOn(unsentOn) };
          if (!(await tx.claimInbox(consumer, messageId))) {
            out.push({ claimed: false, projection: undefined, newer: [], ...unsent });
            continue;
          }
          const projection = await tx.loadProjection(tenantId, threadId);
          const newer = await tx.loadEvents(tenantId, threadId, projection?.version ?? 0);
          const known = requestId === undefined ? undefined : await tx.findRequest(tenantId, requestId);
          const active =
            activeRunsUpTo === undefined
              ? {}
              : { activeRuns: Math.min(activeRunsUpTo, this.countRuns(tenantId, runs, 'in-flight')) };
          const waiting =
            waitingRunsUpTo === undefined
              ? {}
              : { waitingRuns: Math.min(waitingRunsUpTo, this.countRuns(tenantId, runs, 'waiting')) };
          const slotRuns = slots && {
            slotRuns: Object.fromEntries(
              slots.map((s) => [s.key, Math.min(s.max, this.countRuns(tenantId, runs, { slotKey: s.key }))]),
            ),
          };
          const throttled = item.throttleUpTo;
          const throttleStarts = throttled && {
            throttleStarts: Math.min(
              throttled.limit,
              this.countRuns(tenantId, runs, { throttleKey: throttled.key, since: throttled.since }),
            ),
          };
          const latest =
            item.debounceOf === undefined
              ? undefined
              : latestQueued(new Map([...this.runs, ...runs]).values(), tenantId, item.debounceOf);
          out.push({
            claimed: true,
            projection,
            newer,
            ...(known ? { known } : {}),
            ...active,
            ...waiting,
            ...slotRuns,
            ...throttleStarts,
            ...(latest ? { debounceLatest: latest } : {}),
            ...unsent,
          });
        }
        return out;
      },
      claimOnWrite: (consumer, messageId, tenantId, threadId, version) => {
        guarded.push({
          inbox: inboxKey(consumer, messageId),
          thread: threadKey(tenantId, threadId),
          threadId,
          version,
        });
      },
      loadProjection: async (tenantId, threadId) => {
        const key = threadKey(tenantId, threadId);
        const row = projections.get(key) ?? this.projections.get(key);
        return row && jsonClone(row);
      },
      loadEvents: async (tenantId, threadId, afterVersion) => {
        const key = threadKey(tenantId, threadId);
        const all = [...(this.events.get(key) ?? []), ...(appends.get(key)?.events ?? [])];
        return jsonClone(all.filter((e) => e.version > afterVersion));
      },
      appendEvents: async (tenantId, threadId, expectedVersion, events) => {
        if (events.length === 0) return;
        const key = threadKey(tenantId, threadId);
        const pending = appends.get(key);
        const base = pending ? pending.expectedVersion + pending.events.length : expectedVersion;
        events.forEach((e, i) => {
          if (e.version !== expectedVersion + 1 + i) {
            throw new InvariantError(
              `thread ${threadId}: event ${e.id} has version ${e.version}, expected ${expectedVersion + 1 + i}`,
              'thread.version_gap',
            );
          }
          if (e.tenantId !== tenantId || e.threadId !== threadId) {
            throw new InvariantError(
              `event ${e.id} belongs to ${e.tenantId}/${e.threadId}, not ${tenantId}/${threadId}`,
              'thread.foreign_event',
            );
          }
        });
        if (expectedVersion !== base && pending) throw new ConcurrencyError(threadId, expectedVersion);
        const head = this.headVersion(key);
        if (!pending && head > expectedVersion) throw new ConcurrencyError(threadId, expectedVersion);
        if (!pending && head < expectedVersion) {
          throw new InvariantError(
            `thread ${threadId}: cannot append after version ${expectedVersion}, the log does not reach it`,
            'thread.log_behind',
          );
        }
        const copy = jsonClone(events);
        if (pending) pending.events.push(...copy);
        else appends.set(key, { expectedVersion, events: copy });
      },
      saveProjection: async (row, runRows, messages) => {
        const key = threadKey(row.tenantId, row.threadId);
        projections.set(key, jsonClone(row));
        for (const r of runRows) runs.set(threadKey(r.tenantId, r.runId), jsonClone(r));
        if (messages) messageWrites.set(key, [...(messageWrites.get(key) ?? []), jsonClone(messages)]);
      },
      loadMessages: async (tenantId, threadId, count) => {
        const key = threadKey(tenantId, threadId);
        const all = applyMessages(this.messages.get(key) ?? [], messageWrites.get(key) ?? [], threadId);
        if (all.length < count) {
          throw new InvariantError(
            `thread ${tenantId}/${threadId}: ${count} messages expected, ${all.length} stored`,
            'thread.messages_behind',
          );
        }
        return jsonClone(all.slice(0, count));
      },
      findRequest: async (tenantId, requestId) => {
        const run = [...runs.values(), ...this.runs.values()].find(
          (r) => r.tenantId === tenantId && r.requestId === requestId,
        );
        return (
          run && {
            runId: run.runId,
            threadId: run.threadId,
            requestDigest: run.requestDigest ?? null,
            outcome: run.outcome ?? null,
          }
        );
      },
      enqueue: async (messages) => {
        enqueued.push(
          ...jsonClone(
            messages.map(({ storedPayload, ...m }) =>
              storedPayload === undefined ? m : { ...m, payload: storedPayload },
            ),
          ),
        );
      },
      markSent: (ids) => {
        marks.push(...ids);
      },
    };

    let result: T;
    try {
      result = await work(tx);
    } catch (error) {
      release();
      throw error;
    }
    // Commit: validate everything first, then apply synchronously so no other transaction interleaves.
    try {
      for (const g of guarded) {
        if ((this.projections.get(g.thread)?.version ?? 0) !== g.version)
          throw new ConcurrencyError(g.threadId, g.version);
        if (this.inbox.has(g.inbox) || this.claimed.has(g.inbox))
          throw new Error(`inbox message ${g.inbox.replace('\u0000', '/')} was claimed before`);
      }
      for (const [key, { expectedVersion, events }] of appends) {
        if (this.headVersion(key) !== expectedVersion) {
          throw new ConcurrencyError(events[0]?.threadId ?? key, expectedVersion);
        }
        const dup = events.find((e) => this.eventIds.has(e.id));
        if (dup) throw new Error(`duplicate event id ${dup.id}`);
      }
      for (const [key, writes] of messageWrites) {
        applyMessages(this.messages.get(key) ?? [], writes, key);
      }
      const outboxIds = new Set(this.outbox.map((m) => m.id));
      const dupMessage = enqueued.find((m, i) => outboxIds.has(m.id) || enqueued.findIndex((o) => o.id === m.id) !== i);
      if (dupMessage) throw new Error(`duplicate outbox id ${dupMessage.id}`);
    } catch (error) {
      release();
      throw error;
    }
    for (const [key, { events }] of appends) {
      this.events.set(key, [...(this.events.get(key) ?? []), ...events]);
      events.forEach((e) => this.eventIds.add(e.id));
    }
    for (const [key, row] of projections) this.projections.set(key, row);
    for (const [key, row] of runs) this.runs.set(key, row);
    for (const [key, writes] of messageWrites) {
      this.messages.set(key, applyMessages(this.messages.get(key) ?? [], writes, key));
    }
    for (const key of claims) this.inbox.add(key);
    for (const g of guarded) this.inbox.add(g.inbox);
    release();
    for (const m of enqueued) {
      const createdAt = new Date();
      const availableAt =
        m.leaseMs !== undefined
          ? new Date(createdAt.getTime() + m.leaseMs)
          : m.notBefore !== undefined
            ? new Date(m.notBefore)
            : null;
      const holder = m.leaseMs !== undefined ? (m.leasedBy ?? null) : null;
      this.outbox.push({ ...m, createdAt, attempts: 0, sentAt: null, availableAt, holder });
    }
    if (marks.length > 0) await this.markSent(marks);
    return result;
  }

  async readEvents(tenantId: string, threadId: string, afterVersion = 0): Promise<ThreadEvent[]> {
    const events = this.events.get(threadKey(tenantId, threadId)) ?? [];
    return jsonClone(events.filter((e) => e.version > afterVersion));
  }

  async readProjection(tenantId: string, threadId: string): Promise<ThreadProjectionRow<S> | undefined> {
    const row = this.projections.get(threadKey(tenantId, threadId));
    return row && jsonClone(row);
  }

  async readMessages(tenantId: string, threadId: string): Promise<ChatMessage[]> {
    return jsonClone(this.messages.get(threadKey(tenantId, threadId)) ?? []);
  }

  /** The tenant's queued and running runs: the committed rows, as this transaction's rows change them. */
  /** The tenant's runs in flight (queued, or running and not waiting), or its runs waiting for a human. */
  private countRuns(tenantId: string, written: ReadonlyMap<string, RunRow>, which: RunCount): number {
    return countRuns(new Map([...this.runs, ...written]).values(), tenantId, which);
  }

  /** The committed outbox rows on `subject` not marked sent (and not held back), oldest first, as stored. */
  private unsentOn(subject: string): OutboxMessage[] {
    return this.outbox
      .filter((m) => m.subject === subject && m.sentAt === null && m.availableAt === null)
      .map((m) => jsonClone({ id: m.id, subject: m.subject, headers: m.headers, payload: m.payload }));
  }

  /** Committed runs of a thread, for assertions. */
  runsOf(tenantId: string, threadId: string): RunRow[] {
    return jsonClone([...this.runs.values()].filter((r) => r.tenantId === tenantId && r.threadId === threadId));
  }

  async relayBatch(
    limit: number,
    publish: (message: PendingOutboxMessage) => Promise<void>,
    ids?: string[],
    minAgeMs = 0,
  ): Promise<number> {
    const wanted = ids && new Set(ids);
    const bornBefore = Date.now() - minAgeMs;
    const batch = this.outbox
      .filter(
        (m) =>
          m.sentAt === null &&
          !this.locked.has(m.id) &&
          (wanted ? wanted.has(m.id) : m.availableAt === null || m.availableAt.getTime() <= Date.now()) &&
          (minAgeMs <= 0 ||
            m.createdAt.getTime() < bornBefore ||
            (m.availableAt !== null && m.availableAt.getTime() > m.createdAt.getTime())),
      )
      .slice(0, limit);
    batch.forEach((m) => this.locked.add(m.id));
    let sent = 0;
    try {
      for (const m of batch) {
        try {
          await publish({
            ...jsonClone({ id: m.id, subject: m.subject, payload: m.payload, headers: m.headers }),
            createdAt: new Date(m.createdAt.getTime()),
            attempts: m.attempts,
            ...(m.availableAt && m.holder && m.availableAt.getTime() <= Date.now() ? { leaseExpired: true } : {}),
          });
          m.sentAt = new Date();
          sent += 1;
        } catch {
          // stays unsent, like the Postgres relay
        }
        m.attempts += 1;
      }
    } finally {
      batch.forEach((m) => this.locked.delete(m.id));
    }
    return sent;
  }

  async markSent(ids: readonly string[]): Promise<void> {
    const wanted = new Set(ids);
    for (const m of this.outbox)
      if (wanted.has(m.id) && m.sentAt === null) {
        m.sentAt = new Date();
        m.attempts += 1;
      }
  }

  async renewLease(id: string, leaseMs: number): Promise<void> {
    for (const m of this.outbox) if (m.id === id && m.sentAt === null) m.availableAt = new Date(Date.now() + leaseMs);
  }

  async releaseLease(id: string, holder: string): Promise<void> {
    for (const m of this.outbox)
      if (m.id === id && m.sentAt === null && m.holder === holder) {
        m.availableAt = null;
        m.holder = null;
      }
  }

  async prune(olderThan: Date): Promise<number> {
    const before = this.outbox.length;
    const keep = this.outbox.filter(
      (m) =>
        m.sentAt === null || m.sentAt >= olderThan || (m.availableAt !== null && m.availableAt.getTime() > Date.now()),
    );
    this.outbox.splice(0, this.outbox.length, ...keep);
    return before - keep.length;
  }

  async lag(): Promise<{ unsent: number; oldestCreatedAt: Date | null }> {
    const unsent = this.outbox.filter((m) => m.sentAt === null);
    return { unsent: unsent.length, oldestCreatedAt: unsent[0]?.createdAt ?? null };
  }

  private headVersion(key: string): number {
    const events = this.events.get(key);
    return events?.[events.length - 1]?.version ?? 0;
  }
}

/** A conversation after these writes: appends must continue it (a number taken is a conflict); a whole one replaces it. */
function applyMessages(
  stored: readonly ChatMessage[],
  writes: readonly ThreadMessages[],
  threadId: string,
): ChatMessage[] {
  let out = [...stored];
  for (const w of writes) {
    if (w.whole) {
      out = [...out.slice(0, w.from - 1), ...w.messages];
      continue;
    }
    if (w.from <= out.length) throw new ConcurrencyError(threadId, w.from - 1);
    if (w.from !== out.length + 1) {
      throw new Error(`thread ${threadId}: message ${w.from} does not continue the conversation (${out.length})`);
    }
    out.push(...w.messages);
  }
  return out;
}
