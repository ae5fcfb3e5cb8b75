import type { Transaction } from '@mikro-orm/core';
import { decodeThreadEvent, type ThreadEvent } from '@ratchet/contracts';
import {
  ConcurrencyError,
  type OutboxMessage,
  type RunRow,
  type ThreadProjectionRow,
  type ThreadStore,
  type ThreadTx,
} from '@ratchet/domain';
import { claimInbox, enqueueOutbox } from './inbox-outbox.sql';
import type { Database } from './orm';
import { isoColumn, sqlExecutor, valuesList, type SqlExecutor } from './sql';

/** The queryable columns of `threads`, derived from the projection state by the caller's mapper. */
export type ThreadColumnsMapper<S> = (state: S) => { status: string; agent: string | null; activeRunId: string | null };

interface EventRow {
  tenant_id: string;
  thread_id: string;
  version: number;
  id: string;
  type: string;
  v: number;
  run_id: string | null;
  at: string;
  causation_id: string;
  correlation_id: string;
  trace: unknown;
  data: unknown;
}

const EVENT_COLUMNS = `tenant_id, thread_id, version, id, type, v, run_id, ${isoColumn(
  'at',
)}, causation_id, correlation_id, trace, data`;

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

  transaction<T>(work: (tx: ThreadTx<S>) => Promise<T>): Promise<T> {
    const connection = this.db.orm.em.getConnection();
    return connection.transactional((trx) => work(this.txFor(trx)));
  }

  readEvents(tenantId: string, threadId: string, afterVersion = 0): Promise<ThreadEvent[]> {
    return loadEvents(this.db.sql, tenantId, threadId, afterVersion);
  }

  readProjection(tenantId: string, threadId: string): Promise<ThreadProjectionRow<S> | undefined> {
    return loadProjection<S>(this.db.sql, tenantId, threadId);
  }

  private txFor(trx: Transaction): ThreadTx<S> {
    const sql = sqlExecutor(this.db.orm, this.db.schema, trx);
    return {
      claimInbox: (consumer, messageId) => claimInbox(sql, consumer, messageId),
      loadProjection: (tenantId, threadId) => loadProjection<S>(sql, tenantId, threadId),
      loadEvents: (tenantId, threadId, afterVersion) => loadEvents(sql, tenantId, threadId, afterVersion),
      appendEvents: (tenantId, threadId, expectedVersion, events) =>
        appendEvents(sql, tenantId, threadId, expectedVersion, events),
      saveProjection: (row, runs) => saveProjection(sql, this.columns, row, runs),
      enqueue: (messages: OutboxMessage[]) => enqueueOutbox(sql, messages),
    };
  }
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

function rowToEvent(row: EventRow): ThreadEvent {
  return decodeThreadEvent({
    id: row.id,
    type: row.type,
    v: row.v,
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    version: row.version,
    at: row.at,
    causationId: row.causation_id,
    correlationId: row.correlation_id,
    data: row.data,
    ...(row.run_id === null ? {} : { runId: row.run_id }),
    ...(row.trace === null ? {} : { trace: row.trace }),
  });
}

async function appendEvents(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
  expectedVersion: number,
  events: readonly ThreadEvent[],
): Promise<void> {
  if (events.length === 0) return;
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
  // round trip: the insert then writes nothing.
  params.push(expectedVersion, tenantId, threadId, expectedVersion);
  let inserted: number;
  try {
    inserted = await sql.run(
      `insert into ${table}
       (tenant_id, thread_id, version, id, type, v, run_id, at, causation_id, correlation_id, trace, data)
       select * from (values ${valuesList(
         events.length,
         '(?, ?, ?::int, ?, ?, ?::int, ?, ?::timestamptz, ?, ?, ?::jsonb, ?::jsonb)',
       )}) as batch
       where ?::int = 0 or exists (select 1 from ${table} where tenant_id = ? and thread_id = ? and version = ?)`,
      params,
    );
  } catch (error) {
    // Another writer took one of these versions first (it waited for that writer's commit, then failed).
    if (isUniqueViolation(error, 'thread_events_pkey')) {
      throw new ConcurrencyError(threadId, expectedVersion, { cause: error });
    }
    throw error;
  }
  if (inserted !== events.length) {
    throw new Error(`thread ${threadId}: cannot append after version ${expectedVersion}, the log does not reach it`);
  }
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === constraint;
}

async function saveProjection<S>(
  sql: SqlExecutor,
  columns: ThreadColumnsMapper<S>,
  row: ThreadProjectionRow<S>,
  runs: readonly RunRow[],
): Promise<void> {
  const c = columns(row.state);
  await sql.run(
    `insert into ${sql.table('threads')} (tenant_id, thread_id, version, status, agent, active_run_id, state)
     values (?, ?, ?, ?, ?, ?, ?::jsonb)
     on conflict (tenant_id, thread_id) do update set
       version = excluded.version, status = excluded.status, agent = excluded.agent,
       active_run_id = excluded.active_run_id, state = excluded.state, updated_at = now()`,
    [row.tenantId, row.threadId, row.version, c.status, c.agent, c.activeRunId, JSON.stringify(row.state)],
  );
  if (runs.length === 0) return;
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
  await sql.run(
    `insert into ${sql.table('runs')}
     (tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, steps, started_at, ended_at, version)
     values ${valuesList(runs.length, '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?)')}
     on conflict (tenant_id, run_id) do update set
       status = excluded.status, steps = excluded.steps, started_at = excluded.started_at,
       ended_at = excluded.ended_at, version = excluded.version`,
    params,
  );
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
