import { listRuns } from './pg-thread-store';
import { RUN_SUMMARY_COLUMNS, runSummaryOf, type RunSummaryDbRow } from './run.rows';
import { Conditions, isoColumn, type SqlExecutor } from './sql';
import type { ContentSeal } from '../keys/content-seal';
import { EVENT_COLUMNS, openRowsToEvents, type EventRow } from './thread-event.rows';
import {
  TERMINAL_RUN_EVENTS,
  type RunSummary,
  type RunView,
  type ThreadEvent,
  type ThreadSummary,
  type ThreadView,
} from '@ratchet/contracts';

/*
 * Read-only queries behind `<prefix>.threads.<tenant>.<op>` (the orchestrator's threads responder). Every statement filters by the tenant
 * first: a thread id of another tenant finds nothing, exactly like an id that does not exist.
 */

/** The columns of a `threads` row, as they come back from Postgres. */
export interface ThreadDbRow {
  thread_id: string;
  status: string;
  agent: string | null;
  active_run_id: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

interface ThreadRow extends ThreadDbRow {
  run_count: number;
}

const THREAD_COLUMNS = (t: string) =>
  `${t}.thread_id, ${t}.status, ${t}.agent, ${t}.active_run_id, ${t}.version,
   ${isoColumn(`${t}.created_at`, 'created_at')}, ${isoColumn(`${t}.updated_at`, 'updated_at')}`;

function summary(row: ThreadRow): ThreadSummary {
  return {
    threadId: row.thread_id,
    status: row.status as ThreadSummary['status'],
    agent: row.agent,
    activeRunId: row.active_run_id,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    runCount: row.run_count,
  };
}

/** `content`: the runs' outputs are sealed with the thread's key (shown as erased once it is destroyed). */
export async function getThread(
  sql: SqlExecutor,
  content: ContentSeal,
  tenantId: string,
  threadId: string,
): Promise<ThreadView | undefined> {
  const rows = await sql.query<ThreadRow>(
    `select ${THREAD_COLUMNS('t')}, 0 as run_count from ${sql.table('threads')} t
     where t.tenant_id = ? and t.thread_id = ?`,
    [tenantId, threadId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const runs = (await listRuns(sql, tenantId, threadId)).slice(-100);
  const outcomes = await terminalEvents(sql, content, tenantId, threadId);
  const { runCount: _count, ...thread } = summary(row);
  return { ...thread, runs: runs.map((r) => runView(r, outcomes.get(r.runId))) };
}

/** A page cursor: the (created_at, thread_id) of the last thread of the previous page. */
export function encodeCursor(createdAt: string, threadId: string): string {
  return Buffer.from(JSON.stringify([createdAt, threadId])).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: string; threadId: string } | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, threadId] = value as unknown[];
    if (typeof createdAt !== 'string' || typeof threadId !== 'string' || Number.isNaN(Date.parse(createdAt)))
      return undefined;
    return { createdAt, threadId };
  } catch {
    return undefined;
  }
}

/** Newest thread first, keyset-paged by (created_at, thread_id), which never changes once written. */
export async function listThreadPage(
  sql: SqlExecutor,
  tenantId: string,
  filter: {
    status?: string | undefined;
    agent?: string | undefined;
    limit: number;
    after?: { createdAt: string; threadId: string };
  },
): Promise<{ threads: ThreadSummary[]; nextCursor?: string }> {
  const where = new Conditions().eq('t.tenant_id', tenantId).eq('t.status', filter.status);
  if (filter.agent !== undefined) {
    where.and(
      `exists (select 1 from ${sql.table('runs')} a
      where a.tenant_id = t.tenant_id and a.thread_id = t.thread_id and a.agent = ?)`,
      filter.agent,
    );
  }
  if (filter.after)
    where.and('(t.created_at, t.thread_id) < (?::timestamptz, ?)', filter.after.createdAt, filter.after.threadId);
  const rows = await sql.query<ThreadRow>(
    `select ${THREAD_COLUMNS('t')},
       (select count(*)::int from ${sql.table('runs')} c where c.tenant_id = t.tenant_id and c.thread_id = t.thread_id) as run_count
     from ${sql.table('threads')} t
     where ${where}
     order by t.created_at desc, t.thread_id desc limit ?`,
    [...where.params, filter.limit + 1],
  );
  const page = rows.slice(0, filter.limit);
  const last = page.at(-1);
  return {
    threads: page.map(summary),
    ...(rows.length > filter.limit && last ? { nextCursor: encodeCursor(last.created_at, last.thread_id) } : {}),
  };
}

/** The thread's events after `after`, at most `limit`; undefined when the tenant has no such thread. */
export async function readEventPage(
  sql: SqlExecutor,
  content: ContentSeal,
  tenantId: string,
  threadId: string,
  after: number,
  limit: number,
): Promise<{ events: ThreadEvent[]; lastVersion: number; hasMore: boolean } | undefined> {
  const head = await sql.query<{ last: number | null }>(
    `select max(version)::int as last from ${sql.table('thread_events')} where tenant_id = ? and thread_id = ?`,
    [tenantId, threadId],
  );
  const lastVersion = head[0]?.last ?? null;
  if (lastVersion === null) return undefined;
  const rows = await sql.query<EventRow>(
    `select ${EVENT_COLUMNS} from ${sql.table('thread_events')}
     where tenant_id = ? and thread_id = ? and version > ? and version <= ? order by version limit ?`,
    [tenantId, threadId, after, lastVersion, limit],
  );
  const events = await openRowsToEvents(content, rows, 'erased');
  const reached = events.at(-1)?.version ?? after;
  return { events, lastVersion, hasMore: reached < lastVersion };
}

export async function getRun(
  sql: SqlExecutor,
  content: ContentSeal,
  tenantId: string,
  runId: string,
): Promise<RunView | undefined> {
  const rows = await sql.query<{ thread_id: string }>(
    `select thread_id from ${sql.table('runs')} where tenant_id = ? and run_id = ?`,
    [tenantId, runId],
  );
  const threadId = rows[0]?.thread_id;
  if (threadId === undefined) return undefined;
  const run = (await listRuns(sql, tenantId, threadId)).find((r) => r.runId === runId);
  if (!run) return undefined;
  const outcomes = await terminalEvents(sql, content, tenantId, threadId, runId);
  return runView(run, outcomes.get(runId));
}

type Terminal = NonNullable<RunView['outcome']>;

async function terminalEvents(
  sql: SqlExecutor,
  content: ContentSeal,
  tenantId: string,
  threadId: string,
  runId?: string,
): Promise<Map<string, Terminal>> {
  const params: unknown[] = [tenantId, threadId, ...TERMINAL_RUN_EVENTS];
  let runFilter = '';
  if (runId !== undefined) {
    runFilter = 'and run_id = ?';
    params.push(runId);
  }
  const stored = await sql.query<{
    id: string;
    run_id: string;
    type: string;
    version: number;
    data: Record<string, unknown>;
  }>(
    `select id, run_id, type, version, data from ${sql.table('thread_events')}
     where tenant_id = ? and thread_id = ? and type in (?, ?, ?) ${runFilter} and run_id is not null`,
    params,
  );
  const rows = await content.openEvents(stored, 'erased');
  const map = new Map<string, Terminal>();
  for (const r of rows) {
    const status = r.type.slice('run.'.length) as Terminal['status'];
    const outcome: Terminal = { status, version: r.version };
    if (typeof r.data['output'] === 'string') outcome.output = r.data['output'];
    if (r.type === 'run.failed') outcome.error = r.data['error'] as Terminal['error'];
    if (r.type === 'run.cancelled')
      outcome.error = { code: 'run.cancelled', message: String(r.data['reason'] ?? ''), retryable: false };
    map.set(r.run_id, outcome);
  }
  return map;
}

function runView(r: Awaited<ReturnType<typeof listRuns>>[number], outcome: Terminal | undefined): RunView {
  // The row's summary, without what only the orchestrator keeps (its version, digest and stored ending).
  const { tenantId: _tenant, version: _version, requestDigest: _digest, outcome: _ending, ...summary } = r;
  return { ...summary, ...(outcome ? { outcome } : {}) };
}

export interface RunSearch {
  status?: string;
  /** Runs waiting for this (`any`: for any named wait). */
  waiting?: 'approval' | 'waitpoint' | 'operator' | 'any';
  agent?: string;
  threadId?: string;
  since?: string;
  until?: string;
  metadata?: Record<string, string>;
  limit: number;
  /** The (start time, or `infinity` for a run not started, run id) of the last run of the previous page. */
  after?: { startedAt: string; runId: string };
}

/**
 * The tenant's runs, newest start first (runs not started yet come first), by keyset pages. Metadata
 * is the request's, as its `run.requested` event recorded it.
 */
export async function searchRunPage(
  sql: SqlExecutor,
  tenantId: string,
  search: RunSearch,
): Promise<{ runs: RunSummary[]; nextCursor?: string }> {
  const where = new Conditions()
    .eq('r.tenant_id', tenantId)
    .eq('r.status', search.status)
    .eq('r.agent', search.agent)
    .eq('r.thread_id', search.threadId);
  if (search.waiting === 'any') where.and(`r.status = 'running' and r.waiting_on is not null`);
  else if (search.waiting !== undefined) where.and(`r.status = 'running' and r.waiting_on = ?`, search.waiting);
  if (search.since !== undefined) where.and('r.started_at >= ?::timestamptz', search.since);
  if (search.until !== undefined) where.and('r.started_at < ?::timestamptz', search.until);
  if (search.metadata && Object.keys(search.metadata).length > 0) {
    where.and(
      `exists (select 1 from ${sql.table('thread_events')} e
        where e.tenant_id = r.tenant_id and e.thread_id = r.thread_id and e.run_id = r.run_id
          and e.type = 'run.requested' and e.data->'metadata' @> ?::jsonb)`,
      JSON.stringify(search.metadata),
    );
  }
  if (search.after) {
    where.and(
      `(coalesce(r.started_at, 'infinity'::timestamptz), r.run_id) < (?::timestamptz, ?)`,
      search.after.startedAt,
      search.after.runId,
    );
  }
  const rows = await sql.query<RunSummaryDbRow>(
    `select ${RUN_SUMMARY_COLUMNS('r')}
     from ${sql.table('runs')} r
     where ${where}
     order by coalesce(r.started_at, 'infinity'::timestamptz) desc, r.run_id desc
     limit ?`,
    [...where.params, search.limit + 1],
  );
  const page = rows.slice(0, search.limit).map((r): RunSummary => runSummaryOf(r));
  const last = page.at(-1);
  return rows.length > search.limit && last
    ? { runs: page, nextCursor: encodeRunCursor(last.startedAt ?? 'infinity', last.runId) }
    : { runs: page };
}

export function encodeRunCursor(startedAt: string, runId: string): string {
  return Buffer.from(JSON.stringify(['run', startedAt, runId])).toString('base64url');
}

export function decodeRunCursor(cursor: string): { startedAt: string; runId: string } | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3 || value[0] !== 'run') return undefined;
    const [, startedAt, runId] = value as unknown[];
    if (typeof startedAt !== 'string' || typeof runId !== 'string') return undefined;
    if (startedAt !== 'infinity' && Number.isNaN(Date.parse(startedAt))) return undefined;
    return { startedAt, runId };
  } catch {
    return undefined;
  }
}
