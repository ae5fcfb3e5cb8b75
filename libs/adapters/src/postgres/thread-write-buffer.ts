import type { ThreadEvent } from '@ratchet/contracts';
import {
  ConcurrencyError,
  type OutboxMessage,
  type RunRow,
  type ThreadMessages,
  type ThreadProjectionRow,
} from '@ratchet/domain';
import { enqueueStatement } from './inbox-outbox.sql';
import { valuesList, type SqlExecutor, type TransactionSql } from './sql';

/**
 * The write side of a thread transaction: events (with the gap guard), the projection, the `runs` rows,
 * the conversation's new messages and the outbox rows of one or several threads, buffered and sent as one statement of data-modifying
 * CTEs (with the transaction's COMMIT when it is the last).
 */

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

interface Statement {
  cte: string;
  params: unknown[];
}

/** The writes of one transaction, sent together as one statement of data-modifying CTEs. */
export class WriteBuffer<S> {
  private statements: Statement[] = [];
  private appended: Array<{ threadId: string; expectedVersion: number; count: number; cte: string }> = [];
  /** Threads whose projection must still be at this version when the statement runs (a claim on a cached state). */
  private guards: Array<{ tenantId: string; threadId: string; version: number }> = [];
  /** Threads (`tenant\u0000thread`) with buffered writes. */
  private touched = new Set<string>();

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
    this.touched.add(threadKey(tenantId, threadId));
  }

  project(row: ThreadProjectionRow<S>, runs: readonly RunRow[], messages?: ThreadMessages): void {
    this.statements.push(...projectionStatements(this.sql, this.columns, row, runs));
    if (messages) this.statements.push(...messageStatements(this.sql, row.tenantId, row.threadId, messages));
    this.touched.add(threadKey(row.tenantId, row.threadId));
  }

  /**
   * Claims an inbox message together with the writes, for a decision made on a state the caller already
   * had (it did not read the thread in this transaction): the statement fails — nothing is committed —
   * if the message was claimed before (a unique violation) or the thread's projection is no longer at
   * `version` (another writer moved it). The caller then decides again from the database.
   */
  claimOnWrite(consumer: string, messageId: string, tenantId: string, threadId: string, version: number): void {
    this.statements.push({
      cte: `insert into ${this.sql.table('inbox')} (consumer, message_id) values (?, ?)`,
      params: [consumer, messageId],
    });
    this.guards.push({ tenantId, threadId, version });
    this.touched.add(threadKey(tenantId, threadId));
  }

  /** Whether writes to this thread are buffered (a read of its rows must flush them first). */
  touches(tenantId: string, threadId: string): boolean {
    return this.touched.has(threadKey(tenantId, threadId));
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
    const guards = this.guards;
    this.statements = [];
    this.appended = [];
    this.guards = [];
    this.touched = new Set();
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
    // Reads the projection as it was before this statement (a CTE's writes are not visible to it). The
    // failing branch must not be constant (it would be folded, and raise, whatever the condition): it
    // names the version the thread is at.
    const threads = this.sql.table('threads');
    const guardChecks = guards
      .map(
        (g, k) =>
          `case when exists (select 1 from ${threads} where tenant_id = ? and thread_id = ? and version = ?::int) ` +
          `then 1 else ('${STALE_MARKER}' || ${k} || ':' || (select coalesce(max(version), 0) from ${threads} ` +
          `where tenant_id = ? and thread_id = ?))::int end as g${k}`,
      )
      .join(', ');
    const selected = [checks, guardChecks].filter((c) => c.length > 0).join(', ');
    const text = `with ${ctes}\nselect ${selected || '1 as done'}`;
    const params = [
      ...statements.flatMap((s) => s.params),
      ...guards.flatMap((g) => [g.tenantId, g.threadId, g.version, g.tenantId, g.threadId]),
    ];
    try {
      if (commit) await this.sql.queryAndCommit(text, params);
      else await this.sql.query(text, params);
    } catch (error) {
      // Another writer took one of these versions (or message numbers) first: it waited for that writer's
      // commit, then failed.
      const first = appended[0];
      if (
        first &&
        (isUniqueViolation(error, 'thread_events_pkey') || isUniqueViolation(error, 'thread_messages_pkey'))
      ) {
        throw new ConcurrencyError(first.threadId, first.expectedVersion, { cause: error });
      }
      const stale = staleIndex(error);
      const g = stale === undefined ? undefined : guards[stale];
      if (g) throw new ConcurrencyError(g.threadId, g.version, { cause: error });
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
const STALE_MARKER = 'ratchet stale thread ';

/** Which guarded thread had moved on, from the error its guard raised. */
function staleIndex(error: unknown): number | undefined {
  const e = error as { code?: unknown; message?: unknown };
  if (e.code !== '22P02' || typeof e.message !== 'string') return undefined;
  const at = e.message.indexOf(STALE_MARKER);
  if (at < 0) return undefined;
  const n = Number.parseInt(e.message.slice(at + STALE_MARKER.length), 10);
  return Number.isNaN(n) ? undefined : n;
}

/** Which appended batch found a gap, from the error its check raised. */
function gapIndex(error: unknown): number | undefined {
  const e = error as { code?: unknown; message?: unknown };
  if (e.code !== '22P02' || typeof e.message !== 'string') return undefined;
  const at = e.message.indexOf(GAP_MARKER);
  if (at < 0) return undefined;
  const n = Number.parseInt(e.message.slice(at + GAP_MARKER.length), 10);
  return Number.isNaN(n) ? undefined : n;
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

function threadKey(tenantId: string, threadId: string): string {
  return `${tenantId}\u0000${threadId}`;
}

/**
 * The conversation's messages: appended (a number taken already is a unique violation, i.e. a conflict),
 * or for a whole conversation (a rebuild) upserted, with the rows past its end removed (disjoint keys,
 * so the two may share a statement).
 */
function messageStatements(sql: SqlExecutor, tenantId: string, threadId: string, m: ThreadMessages): Statement[] {
  const table = sql.table('thread_messages');
  const out: Statement[] = [];
  if (m.whole) {
    out.push({
      cte: `delete from ${table} where tenant_id = ? and thread_id = ? and seq >= ?`,
      params: [tenantId, threadId, m.from + m.messages.length],
    });
  }
  if (m.messages.length === 0) return out;
  const params: unknown[] = [];
  m.messages.forEach((message, i) => params.push(tenantId, threadId, m.from + i, JSON.stringify(message)));
  out.push({
    cte: `insert into ${table} (tenant_id, thread_id, seq, message)
     values ${valuesList(m.messages.length, '(?, ?, ?::int, ?::jsonb)')}${
       m.whole ? ' on conflict (tenant_id, thread_id, seq) do update set message = excluded.message' : ''
     }`,
    params,
  });
  return out;
}
