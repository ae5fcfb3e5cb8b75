import type { ChatMessage, FeedDecision, ThreadEvent } from '@ratchet/contracts';
import {
  InvariantError,
  type ClaimedThread,
  type ClaimItem,
  type KnownRequest,
  type OutboxMessage,
  type RunRow,
  type ThreadMessages,
  type ThreadProjectionRow,
  type ThreadStore,
  type ThreadTx,
} from '@ratchet/domain';
import type { ContentSeal } from '../keys/content-seal';
import type { OnSealed } from '../keys/sealed-content';
import { EVENT_COLUMNS, openRowsToEvents, rowToStored, type EventRow, type StoredEvent } from './thread-event.rows';
import { WriteBuffer, type ThreadColumnsMapper } from './thread-write-buffer';
import { claimInbox } from './inbox-outbox.sql';
import { insertSnapshot, type ThreadSnapshot } from './retention.queries';
import type { Database } from './orm';
import { inTransaction, isoColumn, valuesList, type SqlExecutor } from './sql';
import { RUN_SUMMARY_COLUMNS, runSummaryOf, type RunSummaryDbRow } from './run.rows';
import {
  debounceLatest,
  runsInFlightCount,
  runsWaitingCount,
  slotRunsCount,
  throttleStartsCount,
} from './runs-in-flight.queries';

export { assertContiguous, type ThreadColumnsMapper } from './thread-write-buffer';

/**
 * The orchestrator's event log and projections in Postgres (schema `orchestrator` by default). With a
 * master key on the database (`Database.content`), the threads' content is sealed as it is written —
 * events, the conversation's messages and the event feed's messages, which are published as stored — and
 * opened as it is read (ADR 0034); a thread whose key was destroyed fails to load (`ContentSealedError`).
 */
export class PgThreadStore<S> implements ThreadStore<S> {
  constructor(
    private readonly db: Database,
    private readonly columns: ThreadColumnsMapper<S>,
  ) {}

  /**
   * Writes (appendEvents, saveProjection, enqueue) are buffered and sent as one statement (data-modifying
   * CTEs) before the next read or before commit, so a handler's whole write set costs one round trip. A
   * ConcurrencyError or a gap therefore surfaces from that flush, at the latest when `work` resolves:
   * always inside the transaction, which then rolls back.
   */
  transaction<T>(work: (tx: ThreadTx<S>) => Promise<T>): Promise<T> {
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      const writes = new WriteBuffer(sql, this.columns);
      const result = await work(this.txFor(sql, writes));
      await writes.flush(true);
      return result;
    });
  }

  /**
   * Restores a compacted thread in one transaction: its snapshot, the events after it (which continue
   * the snapshot rather than an event of this log), its projection, `runs` rows and conversation. Nothing
   * of the thread may exist yet: an existing snapshot or event fails the whole import (unique violation).
   */
  importCompacted(
    snapshot: ThreadSnapshot,
    events: readonly ThreadEvent[],
    projection: ThreadProjectionRow<S>,
    runs: readonly RunRow[],
    messages: ThreadMessages,
  ): Promise<void> {
    const { tenantId, threadId } = snapshot;
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      await insertSnapshot(sql, snapshot);
      const writes = new WriteBuffer(sql, this.columns);
      const sealed = await this.db.content.sealEvents(tenantId, threadId, events, true);
      writes.append(tenantId, threadId, snapshot.version, sealed, true);
      const stored = await this.db.content.sealMessages(tenantId, threadId, messages.from, messages.messages);
      writes.project(projection, runs, { ...messages, messages: stored });
      await writes.flush(true);
    });
  }

  /** `onSealed`: what a reader is shown of content whose key is destroyed (default: it fails). */
  readEvents(
    tenantId: string,
    threadId: string,
    afterVersion = 0,
    onSealed: OnSealed = 'throw',
  ): Promise<ThreadEvent[]> {
    return loadEvents(this.db.sql, this.db.content, tenantId, threadId, afterVersion, onSealed);
  }

  /** The thread's events as stored (content sealed where it was sealed), for copies: exports, re-publishes. */
  async readStoredEvents(tenantId: string, threadId: string, afterVersion = 0): Promise<StoredEvent[]> {
    return (await eventRows(this.db.sql, tenantId, threadId, afterVersion)).map(rowToStored);
  }

  readProjection(tenantId: string, threadId: string): Promise<ThreadProjectionRow<S> | undefined> {
    return loadProjection<S>(this.db.sql, tenantId, threadId);
  }

  readMessages(tenantId: string, threadId: string, onSealed: OnSealed = 'throw'): Promise<ChatMessage[]> {
    return loadMessages(this.db.sql, this.db.content, tenantId, threadId, undefined, onSealed);
  }

  private txFor(sql: SqlExecutor, writes: WriteBuffer<S>): ThreadTx<S> {
    const read = async <R>(fn: () => Promise<R>) => {
      await writes.flush();
      return fn();
    };
    const content = this.db.content;
    // Each event is sealed once: the feed's message of an event carries the same ciphertext as its row.
    const sealedEvents = new Map<string, ThreadEvent>();
    return {
      claimInbox: (consumer, messageId) => read(() => claimInbox(sql, consumer, messageId)),
      claimAndLoadMany: (items) => read(() => claimAndLoadMany<S>(sql, content, items)),
      claimOnWrite: (consumer, messageId, tenantId, threadId, version) =>
        writes.claimOnWrite(consumer, messageId, tenantId, threadId, version),
      loadProjection: (tenantId, threadId) => read(() => loadProjection<S>(sql, tenantId, threadId)),
      loadEvents: (tenantId, threadId, afterVersion) =>
        read(() => loadEvents(sql, content, tenantId, threadId, afterVersion, 'throw')),
      appendEvents: async (tenantId, threadId, expectedVersion, events) => {
        const sealed = await content.sealEvents(tenantId, threadId, events, expectedVersion === 0);
        sealed.forEach((e, i) => e !== events[i] && sealedEvents.set(e.id, e));
        writes.append(tenantId, threadId, expectedVersion, sealed);
      },
      saveProjection: async (row, runs, messages) =>
        writes.project(
          row,
          runs,
          messages && {
            ...messages,
            messages: await content.sealMessages(row.tenantId, row.threadId, messages.from, messages.messages),
          },
        ),
      markSent: (ids) => writes.markSent(ids),
      findRequest: (tenantId, requestId) =>
        read(async () => {
          const rows = await sql.query<KnownRequestRow>(
            `select run_id, thread_id, request_digest, outcome from ${sql.table('runs')}
              where tenant_id = ? and request_id = ?`,
            [tenantId, requestId],
          );
          return rows[0] && knownRequestOf(rows[0]);
        }),
      loadMessages: async (tenantId, threadId, count) => {
        if (writes.touches(tenantId, threadId)) await writes.flush();
        const messages = await loadMessages(sql, content, tenantId, threadId, count, 'throw');
        if (messages.length < count) {
          throw new InvariantError(
            `thread ${tenantId}/${threadId}: ${count} messages expected, ${messages.length} stored ` +
              `(the messages projection is behind the log: run \`ratchet rebuild --thread ${threadId}\`)`,
            'thread.messages_behind',
          );
        }
        return messages;
      },
      enqueue: async (messages: OutboxMessage[]) => {
        // An event appended in this transaction was sealed then: the feed carries that very ciphertext.
        const seal = async (event: ThreadEvent) =>
          sealedEvents.get(event.id) ?? (await content.sealEvents(event.tenantId, event.threadId, [event]))[0]!;
        for (const m of messages) {
          if (!m.sealAs || !content.sealing) continue;
          // Replaced on the message itself: what is published after the commit is what was stored.
          const decision = m.payload as FeedDecision;
          const events: ThreadEvent[] = [];
          for (const e of decision.events as unknown as ThreadEvent[]) events.push(await seal(e));
          m.payload = { ...decision, events };
        }
        writes.enqueue(messages);
      },
    };
  }
}

interface KnownRequestRow {
  run_id: string;
  thread_id: string;
  request_digest: string | null;
  outcome: KnownRequest['outcome'];
}

function knownRequestOf(row: KnownRequestRow): KnownRequest {
  return { runId: row.run_id, threadId: row.thread_id, requestDigest: row.request_digest, outcome: row.outcome };
}

async function claimAndLoadMany<S>(
  sql: SqlExecutor,
  content: ContentSeal,
  items: readonly ClaimItem[],
): Promise<ClaimedThread<S>[]> {
  if (items.length === 0) return [];
  await lockRunsInFlight(sql, items);
  const rows = await sql.query<{
    ord: number;
    claimed: boolean;
    version: number | null;
    state: S | null;
    newer: EventRow[] | null;
    known: KnownRequestRow | null;
    active_runs: number | null;
    waiting_runs: number | null;
    slot_runs: Record<string, number> | null;
    throttle_starts: number | null;
    debounce_latest: string | null;
    unsent: OutboxMessage[] | null;
  }>(
    `with input (ord, consumer, message_id, tenant_id, thread_id, request_id, active_up_to, waiting_up_to, unsent_on, slots,
                 throttle_key, throttle_limit, throttle_since, debounce_key) as (values ${valuesList(items.length, '(?::int, ?, ?, ?, ?, ?::text, ?::int, ?::int, ?::text, ?::jsonb, ?::text, ?::int, ?::timestamptz, ?::text)')}),
     claim as (
       insert into ${sql.table('inbox')} (consumer, message_id)
       select consumer, message_id from input on conflict do nothing returning consumer, message_id
     )
     select i.ord, exists (select 1 from claim c where c.consumer = i.consumer and c.message_id = i.message_id) as claimed,
       t.version, t.state,
       (select json_agg(e order by e.version) from (
          select ${EVENT_COLUMNS} from ${sql.table('thread_events')} ev
          where ev.tenant_id = i.tenant_id and ev.thread_id = i.thread_id and ev.version > coalesce(t.version, 0)
        ) e) as newer,
       (select json_build_object('run_id', r.run_id, 'thread_id', r.thread_id, 'request_digest', r.request_digest,
               'outcome', r.outcome)
          from ${sql.table('runs')} r
         where i.request_id is not null and r.tenant_id = i.tenant_id and r.request_id = i.request_id) as known,
       case when i.active_up_to is not null
            then ${runsInFlightCount(sql, 'i.tenant_id', 'i.active_up_to')} end as active_runs,
       case when i.waiting_up_to is not null
            then ${runsWaitingCount(sql, 'i.tenant_id', 'i.waiting_up_to')} end as waiting_runs,
       (select json_object_agg(s.key, ${slotRunsCount(sql, 'i.tenant_id', 's.key', 's.max')})
          from jsonb_to_recordset(i.slots) as s(key text, max int)) as slot_runs,
       case when i.throttle_key is not null
            then ${throttleStartsCount(sql, 'i.tenant_id', 'i.throttle_key', 'i.throttle_since', 'i.throttle_limit')} end
         as throttle_starts,
       case when i.debounce_key is not null then ${debounceLatest(sql, 'i.tenant_id', 'i.debounce_key')} end
         as debounce_latest,
       (select json_agg(json_build_object('id', o.id, 'subject', o.subject, 'headers', o.headers, 'payload', o.payload)
                        order by o.created_at, o.id)
          from ${sql.table('outbox')} o
         where i.unsent_on is not null and o.sent_at is null and o.available_at is null
           and o.subject = i.unsent_on) as unsent
     from input i
     left join ${sql.table('threads')} t on t.tenant_id = i.tenant_id and t.thread_id = i.thread_id
     order by i.ord`,
    items.flatMap((item, ord) => [
      ord,
      item.consumer,
      item.messageId,
      item.tenantId,
      item.threadId,
      item.requestId ?? null,
      item.activeRunsUpTo ?? null,
      item.waitingRunsUpTo ?? null,
      item.unsentOn ?? null,
      item.slotsUpTo && item.slotsUpTo.length > 0 ? JSON.stringify(item.slotsUpTo) : null,
      item.throttleUpTo?.key ?? null,
      item.throttleUpTo?.limit ?? null,
      item.throttleUpTo?.since ?? null,
      item.debounceOf ?? null,
    ]),
  );
  const newer = await Promise.all(rows.map((r) => openRowsToEvents(content, r.newer ?? [], 'throw')));
  return items.map((item, ord) => {
    const at = rows.findIndex((r) => r.ord === ord);
    const row = rows[at];
    const projection =
      row && row.version !== null && row.state !== null
        ? { tenantId: item.tenantId, threadId: item.threadId, version: row.version, state: row.state }
        : undefined;
    return {
      claimed: row?.claimed === true,
      projection,
      newer: newer[at] ?? [],
      ...(item.requestId !== undefined && row?.known ? { known: knownRequestOf(row.known) } : {}),
      ...(item.activeRunsUpTo !== undefined ? { activeRuns: row?.active_runs ?? 0 } : {}),
      ...(item.waitingRunsUpTo !== undefined ? { waitingRuns: row?.waiting_runs ?? 0 } : {}),
      ...(item.slotsUpTo && item.slotsUpTo.length > 0 ? { slotRuns: row?.slot_runs ?? {} } : {}),
      ...(item.throttleUpTo !== undefined ? { throttleStarts: row?.throttle_starts ?? 0 } : {}),
      ...(item.debounceOf !== undefined && row?.debounce_latest ? { debounceLatest: row.debounce_latest } : {}),
      ...(item.unsentOn !== undefined ? { unsent: row?.unsent ?? [] } : {}),
    };
  });
}

/**
 * A hard bound on a tenant's runs in flight, on each concurrency key's and on each throttle's starts (ADR
 * 0045): the run requests (and admissions) of a tenant under a bound, holding a key or throttled, are decided one transaction at a time, on
 * every orchestrator, by a transaction-scoped advisory lock per tenant and per (tenant, key) taken before
 * the claim counts their runs — so each count is read after every earlier admission it concerns has
 * committed. Locks are taken in one order (no deadlock between two batches); they are held to the commit.
 * The runs a batch admits itself are counted by the engine (each count is read once).
 */
async function lockRunsInFlight(sql: SqlExecutor, items: readonly ClaimItem[]): Promise<void> {
  const names = new Set<string>();
  for (const i of items) {
    if (i.activeRunsUpTo !== undefined) names.add(`ratchet.runs-in-flight:${i.tenantId}`);
    for (const s of i.slotsUpTo ?? []) names.add(`ratchet.slot:${i.tenantId}:${s.key}`);
    if (i.throttleUpTo) names.add(`ratchet.throttle:${i.tenantId}:${i.throttleUpTo.key}`);
    if (i.debounceOf !== undefined) names.add(`ratchet.debounce:${i.tenantId}:${i.debounceOf}`);
  }
  if (names.size === 0) return;
  await sql.query(
    `select pg_advisory_xact_lock(k) from (
       select distinct hashtextextended(n, 0) as k from unnest(array[?]::text[]) n order by 1
     ) ordered`,
    [[...names]],
  );
}

async function loadProjection<S>(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
): Promise<ThreadProjectionRow<S> | undefined> {
  const rows = await sql.query<{ version: number; state: S }>(
    `select version, state from ${sql.table('threads')} where tenant_id = ? and thread_id = ?`,
    [tenantId, threadId],
  );
  const row = rows[0];
  return row && { tenantId, threadId, version: row.version, state: row.state };
}

/** Messages of a thread's conversation, oldest first: all of them, or the first `count`. */
async function loadMessages(
  sql: SqlExecutor,
  content: ContentSeal,
  tenantId: string,
  threadId: string,
  count: number | undefined,
  onSealed: OnSealed,
): Promise<ChatMessage[]> {
  if (count === 0) return [];
  const rows = await sql.query<{ seq: number; message: ChatMessage }>(
    `select seq, message from ${sql.table('thread_messages')}
     where tenant_id = ? and thread_id = ?${count === undefined ? '' : ' and seq <= ?'} order by seq`,
    count === undefined ? [tenantId, threadId] : [tenantId, threadId, count],
  );
  return content.openMessages(tenantId, threadId, rows, onSealed);
}

async function loadEvents(
  sql: SqlExecutor,
  content: ContentSeal,
  tenantId: string,
  threadId: string,
  afterVersion: number,
  onSealed: OnSealed,
): Promise<ThreadEvent[]> {
  return openRowsToEvents(content, await eventRows(sql, tenantId, threadId, afterVersion), onSealed);
}

/** The thread's rows of the log after `afterVersion`, in order, as stored. */
function eventRows(sql: SqlExecutor, tenantId: string, threadId: string, afterVersion: number): Promise<EventRow[]> {
  return sql.query<EventRow>(
    `select ${EVENT_COLUMNS} from ${sql.table('thread_events')}
     where tenant_id = ? and thread_id = ? and version > ? order by version`,
    [tenantId, threadId, afterVersion],
  );
}

export async function listRuns(sql: SqlExecutor, tenantId: string, threadId: string): Promise<RunRow[]> {
  const rows = await sql.query<
    RunSummaryDbRow & {
      tenant_id: string;
      version: number;
      request_digest: string | null;
      outcome: RunRow['outcome'];
      slot_keys: string[] | null;
      queued_until: string | null;
      priority: number;
      throttle_key: string | null;
      debounce_key: string | null;
    }
  >(
    `select r.tenant_id, ${RUN_SUMMARY_COLUMNS('r')}, r.version, r.request_digest, r.outcome, r.slot_keys,
            ${isoColumn('r.queued_until', 'queued_until')}, r.priority, r.throttle_key, r.debounce_key
     from ${sql.table('runs')} r where r.tenant_id = ? and r.thread_id = ? order by r.version, r.run_id`,
    [tenantId, threadId],
  );
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    ...runSummaryOf(r),
    version: r.version,
    requestDigest: r.request_digest,
    outcome: r.outcome,
    ...(r.slot_keys ? { slotKeys: r.slot_keys } : {}),
    ...(r.throttle_key ? { throttleKey: r.throttle_key } : {}),
    ...(r.debounce_key ? { debounceKey: r.debounce_key } : {}),
    ...(r.queued_until ? { queuedUntil: r.queued_until } : {}),
    ...(r.priority ? { priority: r.priority } : {}),
  }));
}
