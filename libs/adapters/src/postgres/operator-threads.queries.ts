import { Conditions, isoColumn, type SqlExecutor } from './sql';
import type { ThreadDbRow } from './threads.queries';

/**
 * Read-only queries over the orchestrator schema for operators (`ratchet threads`, `replay`, `rebuild`,
 * `stream-check`, `export`). They never decide anything and never write.
 */

export interface ThreadKey {
  tenantId: string;
  threadId: string;
}

export interface ThreadKeyFilter {
  tenantId?: string | undefined;
  threadId?: string | undefined;
  /** Only threads after this one in (tenant, thread) order: how a long rebuild resumes. */
  after?: ThreadKey | undefined;
  limit?: number | undefined;
}

/**
 * Every thread that has a log, in (tenant, thread) order, whether or not it has a projection row: the
 * log is the system of record, so this is the list to verify and rebuild from.
 */
export async function listThreadKeys(sql: SqlExecutor, filter: ThreadKeyFilter = {}): Promise<ThreadKey[]> {
  const where = threadKeyConditions(filter, 'version = 1');
  // Every log starts at version 1 (appends are contiguous), so one row per thread without a GROUP BY.
  const rows = await sql.query<{ tenant_id: string; thread_id: string }>(
    `select tenant_id, thread_id from ${sql.table('thread_events')}
     where ${where} order by tenant_id, thread_id limit ?`,
    [...where.params, filter.limit ?? 1_000_000],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, threadId: r.thread_id }));
}

/** The conditions of a `ThreadKeyFilter` (its tenant, thread and resume point), after `always`. */
export function threadKeyConditions(filter: ThreadKeyFilter, ...always: string[]): Conditions {
  const where = new Conditions(...always).eq('tenant_id', filter.tenantId).eq('thread_id', filter.threadId);
  if (filter.after) where.and('(tenant_id, thread_id) > (?, ?)', filter.after.tenantId, filter.after.threadId);
  return where;
}

/** The tenants that own a thread with this id (an operator often has the thread id only). */
export async function tenantsOfThread(sql: SqlExecutor, threadId: string): Promise<string[]> {
  const rows = await sql.query<{ tenant_id: string }>(
    `select tenant_id from ${sql.table('thread_events')} where thread_id = ? and version = 1 order by tenant_id`,
    [threadId],
  );
  return rows.map((r) => r.tenant_id);
}

export interface ThreadListFilter {
  tenantId?: string | undefined;
  status?: string | undefined;
  agent?: string | undefined;
  /** Only threads updated at or after this time. */
  since?: Date | undefined;
  limit?: number | undefined;
}

export interface ThreadListRow {
  tenantId: string;
  threadId: string;
  status: string;
  agent: string | null;
  activeRunId: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
  runs: number;
  lastRun: { runId: string; status: string; agent: string; steps: number; endedAt: string | null } | null;
}

/** The `threads` projection joined with its latest run, newest first. */
export async function listThreads(sql: SqlExecutor, filter: ThreadListFilter = {}): Promise<ThreadListRow[]> {
  const where = new Conditions('true').eq('t.tenant_id', filter.tenantId).eq('t.status', filter.status);
  if (filter.agent !== undefined) {
    // The thread's active agent, or the agent of any of its runs.
    where.and(
      `(t.agent = ? or exists (select 1 from ${sql.table('runs')} a
      where a.tenant_id = t.tenant_id and a.thread_id = t.thread_id and a.agent = ?))`,
      filter.agent,
      filter.agent,
    );
  }
  if (filter.since !== undefined) where.and('t.updated_at >= ?::timestamptz', filter.since.toISOString());
  const rows = await sql.query<
    ThreadDbRow & {
      tenant_id: string;
      runs: number;
      run_id: string | null;
      run_status: string | null;
      run_agent: string | null;
      run_steps: number | null;
      run_ended_at: string | null;
    }
  >(
    `select t.tenant_id, t.thread_id, t.status, t.agent, t.active_run_id, t.version,
       ${isoColumn('t.created_at', 'created_at')}, ${isoColumn('t.updated_at', 'updated_at')},
       (select count(*)::int from ${sql.table('runs')} c where c.tenant_id = t.tenant_id and c.thread_id = t.thread_id) as runs,
       r.run_id, r.status as run_status, r.agent as run_agent, r.steps as run_steps,
       ${isoColumn('r.ended_at', 'run_ended_at')}
     from ${sql.table('threads')} t
     left join lateral (
       select run_id, status, agent, steps, ended_at from ${sql.table('runs')} x
       where x.tenant_id = t.tenant_id and x.thread_id = t.thread_id order by x.version desc, x.run_id desc limit 1
     ) r on true
     where ${where}
     order by t.updated_at desc, t.tenant_id, t.thread_id limit ?`,
    [...where.params, filter.limit ?? 100],
  );
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    threadId: r.thread_id,
    status: r.status,
    agent: r.agent,
    activeRunId: r.active_run_id,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    runs: r.runs,
    lastRun:
      r.run_id === null
        ? null
        : {
            runId: r.run_id,
            status: r.run_status ?? '',
            agent: r.run_agent ?? '',
            steps: r.run_steps ?? 0,
            endedAt: r.run_ended_at,
          },
  }));
}

/** The stored queryable columns of a thread's projection row (the jsonb state is read by PgThreadStore). */
export async function readThreadColumns(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
): Promise<{ status: string; agent: string | null; activeRunId: string | null } | undefined> {
  const rows = await sql.query<{ status: string; agent: string | null; active_run_id: string | null }>(
    `select status, agent, active_run_id from ${sql.table('threads')} where tenant_id = ? and thread_id = ?`,
    [tenantId, threadId],
  );
  const r = rows[0];
  return r && { status: r.status, agent: r.agent, activeRunId: r.active_run_id };
}
