import type { ThreadEvent } from '@ratchet/contracts';
import {
  ConcurrencyError,
  type OutboxMessage,
  type RunRow,
  type ThreadProjectionRow,
  type ThreadStore,
  type ThreadTx,
} from '@ratchet/domain';
import { EVENT_COLUMNS, rowToEvent, type EventRow } from './thread-event.rows';
import { claimInbox, enqueueStatement } from './inbox-outbox.sql';
import { insertSnapshot, type ThreadSnapshot } from './retention.queries';
import type { Database } from './orm';
import { inTransaction, isoColumn, valuesList, type SqlExecutor, type TransactionSql } from './sql';

/** The queryable columns of `threads`, derived from the projection state by the caller's mapper. */
export type ThreadColumnsMapper<S> = (state: S) => { status: string; agent: string | null; activeRunId: string | null };

/** Checks what a unique index would not: the batch starts right after what the caller read, without gaps. */
export function assertContiguous(threadId: string, expectedVersion: number, events: readonly ThreadEvent[]): void {
  events.forEach((event, i) => {
    if (event.version !== expectedVersion + 1 + i) {
      throw new Error(
        `thread ${threadId}: event ${event.id} has version ${event.version}, expected ${expectedVersion + 1 + i} ` +
          `(events must continue version ${expectedVersion} without a gap)`,
      );
    }
  });
}

/** The orchestrator's event log and projections in Postgres (schema `orchestrator` by default). */
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
  transaction<T>(work: (tx: PgThreadTx<S>) => Promise<T>): Promise<T> {
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      const writes = new WriteBuffer(sql, this.columns);
      const result = await work(this.txFor(sql, writes));
      await writes.flush(true);
      return result;
    });
  }

  /**
   * Restores a compacted thread in one transaction: its snapshot, the events after it (which continue
   * the snapshot rather than an event of this log), its projection and `runs` rows. Nothing of the thread
   * may exist yet: an existing snapshot or event fails the whole import (unique violation).
   */
  importCompacted(
    snapshot: ThreadSnapshot<S>,
    events: readonly ThreadEvent[],
    projection: ThreadProjectionRow<S>,
    runs: readonly RunRow[],
  ): Promise<void> {
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      await insertSnapshot(sql, snapshot);
      const writes = new WriteBuffer(sql, this.columns);
      writes.append(snapshot.tenantId, snapshot.threadId, snapshot.version, events, true);
      writes.project(projection, runs);
      await writes.flush(true);
    });
  }

  readEvents(tenantId: string, threadId: string, afterVersion = 0): Promise<ThreadEvent[]> {
    return loadEvents(this.db.sql, tenantId, threadId, afterVersion);
  }

  readProjection(tenantId: string, threadId: string): Promise<ThreadProjectionRow<S> | undefined> {
    return loadProjection<S>(this.db.sql, tenantId, threadId);
  }

  private txFor(sql: SqlExecutor, writes: WriteBuffer<S>): PgThreadTx<S> {
    const read = async <R>(fn: () => Promise<R>) => {
      await writes.flush();
      return fn();
    };
    return {
      claimInbox: (consumer, messageId) => read(() => claimInbox(sql, consumer, messageId)),
      claimAndLoad: (consumer, messageId, tenantId, threadId) =>
        read(() => claimAndLoad<S>(sql, consumer, messageId, tenantId, threadId)),
      claimAndLoadMany: (items) => read(() => claimAndLoadMany<S>(sql, items)),
      loadProjection: (tenantId, threadId) => read(() => loadProjection<S>(sql, tenantId, threadId)),
      loadEvents: (tenantId, threadId, afterVersion) => read(() => loadEvents(sql, tenantId, threadId, afterVersion)),
      appendEvents: async (tenantId, threadId, expectedVersion, events) =>
        writes.append(tenantId, threadId, expectedVersion, events),
      saveProjection: async (row, runs) => writes.project(row, runs),
      enqueue: async (messages: OutboxMessage[]) => writes.enqueue(messages),
    };
  }
}

/** What a handler needs at the start of its transaction, in one round trip. */
export interface ClaimedThread<S> {
  /** False when the message was processed before (a redelivery): nothing else matters then. */
  claimed: boolean;
  projection: ThreadProjectionRow<S> | undefined;
  /** Events newer than the projection (all of them when there is none), in order. */
  newer: ThreadEvent[];
}

/** The Postgres transaction: the port, plus claim + projection + newer events in one statement. */
export interface PgThreadTx<S> extends ThreadTx<S> {
  claimAndLoad(consumer: string, messageId: string, tenantId: string, threadId: string): Promise<ClaimedThread<S>>;
  /** The same for several messages (of different threads) in one statement, answers in input order. */
  claimAndLoadMany(items: readonly ClaimItem[]): Promise<ClaimedThread<S>[]>;
}

export interface ClaimItem {
  consumer: string;
  messageId: string;
  tenantId: string;
  threadId: string;
}

async function claimAndLoadMany<S>(sql: SqlExecutor, items: readonly ClaimItem[]): Promise<ClaimedThread<S>[]> {
  if (items.length === 0) return [];
  const rows = await sql.query<{
    ord: number;
    claimed: boolean;
    version: number | null;
    state: S | null;
    newer: EventRow[] | null;
  }>(
    `with input (ord, consumer, message_id, tenant_id, thread_id) as (values ${valuesList(items.length, '(?::int, ?, ?, ?, ?)')}),
     claim as (
       insert into ${sql.table('inbox')} (consumer, message_id)
       select consumer, message_id from input on conflict do nothing returning consumer, message_id
     )
     select i.ord, exists (select 1 from claim c where c.consumer = i.consumer and c.message_id = i.message_id) as claimed,
       t.version, t.state,
       (select json_agg(e order by e.version) from (
          select ${EVENT_COLUMNS} from ${sql.table('thread_events')} ev
          where ev.tenant_id = i.tenant_id and ev.thread_id = i.thread_id and ev.version > coalesce(t.version, 0)
        ) e) as newer
     from input i
     left join ${sql.table('threads')} t on t.tenant_id = i.tenant_id and t.thread_id = i.thread_id
     order by i.ord`,
    items.flatMap((item, ord) => [ord, item.consumer, item.messageId, item.tenantId, item.threadId]),
  );
  return items.map((item, ord) => {
    const row = rows.find((r) => r.ord === ord);
    const projection =
      row && row.version !== null && row.state !== null
        ? { tenantId: item.tenantId, threadId: item.threadId, version: row.version, state: row.state }
        : undefined;
    return { claimed: row?.claimed === true, projection, newer: (row?.newer ?? []).map(rowToEvent) };
  });
}

async function claimAndLoad<S>(
  sql: SqlExecutor,
  consumer: string,
  messageId: string,
  tenantId: string,
  threadId: string,
): Promise<ClaimedThread<S>> {
  const rows = await sql.query<{ claimed: number; version: number | null; state: S | null; newer: EventRow[] | null }>(
    `with claim as (
       insert into ${sql.table('inbox')} (consumer, message_id) values (?, ?) on conflict do nothing returning 1
     )
     select (select count(*) from claim)::int as claimed, t.version, t.state,
       (select json_agg(e order by e.version) from (
          select ${EVENT_COLUMNS} from ${sql.table('thread_events')} ev
          where ev.tenant_id = ? and ev.thread_id = ? and ev.version > coalesce(t.version, 0)
        ) e) as newer
     from (select 1) as one
     left join ${sql.table('threads')} t on t.tenant_id = ? and t.thread_id = ?`,
    [consumer, messageId, tenantId, threadId, tenantId, threadId],
  );
  const row = rows[0];
  const projection =
    row && row.version !== null && row.state !== null
      ? { tenantId, threadId, version: row.version, state: row.state }
      : undefined;
  return { claimed: row?.claimed === 1, projection, newer: (row?.newer ?? []).map(rowToEvent) };
}

interface Statement {
  cte: string;
  params: unknown[];
}

/** The writes of one transaction, sent together as one statement of data-modifying CTEs. */
class WriteBuffer<S> {
  private statements: Statement[] = [];
  private appended: Array<{ threadId: string; expectedVersion: number; count: number; cte: string }> = [];

  constructor(
    private readonly sql: TransactionSql,
    private readonly columns: ThreadColumnsMapper<S>,
  ) {}

  /** `afterSnapshot`: the batch continues a snapshot, not an event of this log (a compacted thread's import). */
  append(
    tenantId: string,
    threadId: string,
    expectedVersion: number,
    events: readonly ThreadEvent[],
    afterSnapshot = false,
  ): void {
    const s = appendStatement(this.sql, tenantId, threadId, expectedVersion, events, afterSnapshot);
    if (!s) return;
    const cte = `w${this.statements.length}`;
    this.statements.push(s);
    this.appended.push({ threadId, expectedVersion, count: events.length, cte });
  }

  project(row: ThreadProjectionRow<S>, runs: readonly RunRow[]): void {
    this.statements.push(...projectionStatements(this.sql, this.columns, row, runs));
  }

  enqueue(messages: readonly OutboxMessage[]): void {
    const s = enqueueStatement(this.sql, messages);
    if (s) this.statements.push(s);
  }

  /**
   * Sends the buffered writes as one statement; with `commit`, the transaction's COMMIT goes in the same
   * round trip. A gap before an appended batch is detected inside the statement (it raises), so nothing
   * is committed when one is found.
   */
  async flush(commit = false): Promise<void> {
    // Nothing buffered: the transaction commits on its own (one round trip either way).
    if (this.statements.length === 0) return;
    const statements = this.statements;
    const appended = this.appended;
    this.statements = [];
    this.appended = [];
    const ctes = statements.map((s, i) => `w${i} as (${s.cte} returning 1)`).join(',\n');
    // A batch that inserted fewer rows than it has events found a gap: the cast of a non-constant text
    // raises, so the statement (and any COMMIT after it) fails.
    const checks = appended
      .map(
        (a, k) =>
          `case when (select count(*) from ${a.cte}) = ${a.count} then 1 ` +
          `else ('${GAP_MARKER}' || ${k} || ':' || (select count(*) from ${a.cte}))::int end as ${a.cte}`,
      )
      .join(', ');
    const text = `with ${ctes}\nselect ${checks || '1 as done'}`;
    const params = statements.flatMap((s) => s.params);
    try {
      if (commit) await this.sql.queryAndCommit(text, params);
      else await this.sql.query(text, params);
    } catch (error) {
      // Another writer took one of these versions first (it waited for that writer's commit, then failed).
      const first = appended[0];
      if (first && isUniqueViolation(error, 'thread_events_pkey')) {
        throw new ConcurrencyError(first.threadId, first.expectedVersion, { cause: error });
      }
      const gap = gapIndex(error);
      const a = gap === undefined ? undefined : appended[gap];
      if (a) {
        throw new Error(
          `thread ${a.threadId}: cannot append after version ${a.expectedVersion}, the log does not reach it`,
          { cause: error },
        );
      }
      throw error;
    }
  }
}

const GAP_MARKER = 'ratchet append gap ';

/** Which appended batch found a gap, from the error its check raised. */
function gapIndex(error: unknown): number | undefined {
  const e = error as { code?: unknown; message?: unknown };
  if (e.code !== '22P02' || typeof e.message !== 'string') return undefined;
  const at = e.message.indexOf(GAP_MARKER);
  if (at < 0) return undefined;
  const n = Number.parseInt(e.message.slice(at + GAP_MARKER.length), 10);
  return Number.isNaN(n) ? undefined : n;
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

async function loadEvents(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
  afterVersion: number,
): Promise<ThreadEvent[]> {
  const rows = await sql.query<EventRow>(
    `select ${EVENT_COLUMNS} from ${sql.table('thread_events')}
     where tenant_id = ? and thread_id = ? and version > ? order by version`,
    [tenantId, threadId, afterVersion],
  );
  return rows.map(rowToEvent);
}

function appendStatement(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
  expectedVersion: number,
  events: readonly ThreadEvent[],
  afterSnapshot = false,
): Statement | undefined {
  if (events.length === 0) return undefined;
  assertContiguous(threadId, expectedVersion, events);
  const params: unknown[] = [];
  for (const e of events) {
    if (e.tenantId !== tenantId || e.threadId !== threadId) {
      throw new Error(`event ${e.id} belongs to ${e.tenantId}/${e.threadId}, not ${tenantId}/${threadId}`);
    }
    params.push(
      tenantId,
      threadId,
      e.version,
      e.id,
      e.type,
      e.v,
      e.runId ?? null,
      e.at,
      e.causationId,
      e.correlationId,
      e.trace === undefined ? null : JSON.stringify(e.trace),
      JSON.stringify(e.data),
    );
  }
  const table = sql.table('thread_events');
  // The `where` guards against a gap before the batch (expectedVersion ahead of the log) in the same
  // statement: the insert then writes nothing, and the flush sees fewer rows than events.
  // After a snapshot the event before the batch is folded into it: no row to find (0 = no guard).
  params.push(afterSnapshot ? 0 : expectedVersion, tenantId, threadId, expectedVersion);
  return {
    cte: `insert into ${table}
       (tenant_id, thread_id, version, id, type, v, run_id, at, causation_id, correlation_id, trace, data)
       select * from (values ${valuesList(
         events.length,
         '(?, ?, ?::int, ?, ?, ?::int, ?, ?::timestamptz, ?, ?, ?::jsonb, ?::jsonb)',
       )}) as batch
       where ?::int = 0 or exists (select 1 from ${table} where tenant_id = ? and thread_id = ? and version = ?)`,
    params,
  };
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === constraint;
}

function projectionStatements<S>(
  sql: SqlExecutor,
  columns: ThreadColumnsMapper<S>,
  row: ThreadProjectionRow<S>,
  runs: readonly RunRow[],
): Statement[] {
  const c = columns(row.state);
  const out: Statement[] = [
    {
      cte: `insert into ${sql.table('threads')} (tenant_id, thread_id, version, status, agent, active_run_id, state)
     values (?, ?, ?, ?, ?, ?, ?::jsonb)
     on conflict (tenant_id, thread_id) do update set
       version = excluded.version, status = excluded.status, agent = excluded.agent,
       active_run_id = excluded.active_run_id, state = excluded.state, updated_at = now()`,
      params: [row.tenantId, row.threadId, row.version, c.status, c.agent, c.activeRunId, JSON.stringify(row.state)],
    },
  ];
  if (runs.length === 0) return out;
  const params: unknown[] = [];
  for (const r of runs) {
    params.push(
      r.tenantId,
      r.runId,
      r.threadId,
      r.requestId,
      r.agent,
      r.agentVersion,
      r.principalId,
      r.status,
      r.steps,
      r.startedAt,
      r.endedAt,
      r.version,
    );
  }
  out.push({
    cte: `insert into ${sql.table('runs')}
     (tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, steps, started_at, ended_at, version)
     values ${valuesList(runs.length, '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?)')}
     on conflict (tenant_id, run_id) do update set
       status = excluded.status, steps = excluded.steps, started_at = excluded.started_at,
       ended_at = excluded.ended_at, version = excluded.version`,
    params,
  });
  return out;
}

/** Reads the `runs` projection of a thread (oldest request first); for queries, not for deciding. */
export async function listRuns(sql: SqlExecutor, tenantId: string, threadId: string): Promise<RunRow[]> {
  const rows = await sql.query<{
    tenant_id: string;
    run_id: string;
    thread_id: string;
    request_id: string;
    agent: string;
    agent_version: number;
    principal_id: string;
    status: RunRow['status'];
    steps: number;
    started_at: string | null;
    ended_at: string | null;
    version: number;
  }>(
    `select tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, steps,
       ${isoColumn('started_at')}, ${isoColumn('ended_at')},
       version
     from ${sql.table('runs')} where tenant_id = ? and thread_id = ? order by version, run_id`,
    [tenantId, threadId],
  );
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    runId: r.run_id,
    threadId: r.thread_id,
    requestId: r.request_id,
    agent: r.agent,
    agentVersion: r.agent_version,
    principalId: r.principal_id,
    status: r.status,
    steps: r.steps,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    version: r.version,
  }));
}
