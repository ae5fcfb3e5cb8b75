import { threadKeyConditions, type ThreadKey, type ThreadKeyFilter } from './operator-threads.queries';
import { isoColumn, type SqlExecutor } from './sql';

/**
 * Retention (architecture §9): thread snapshots, the threads a policy may act on, the lock a compaction
 * or a removal takes. Erasure and the removal of a thread from every schema: `erasure.queries.ts`.
 */

/**
 * A compacted thread's log starts after `version`; `state` is the fold of the events it replaced (for the
 * orchestrator's threads: the state with the conversation and the run summaries, which a compacted log
 * can no longer give).
 */
export interface ThreadSnapshot<S = unknown> {
  tenantId: string;
  threadId: string;
  version: number;
  state: S;
  /** Per run, the version of the last event (now folded into the snapshot) that touched it. */
  runVersions: Record<string, number>;
  eventsRemoved: number;
  createdAt?: string;
}

export async function readSnapshot<S>(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
): Promise<ThreadSnapshot<S> | undefined> {
  const rows = await sql.query<{
    version: number;
    state: S;
    run_versions: Record<string, number>;
    events_removed: number;
    created_at: string;
  }>(
    `select version, state, run_versions, events_removed, ${isoColumn('created_at')}
     from ${sql.table('thread_snapshots')} where tenant_id = ? and thread_id = ?`,
    [tenantId, threadId],
  );
  const r = rows[0];
  return (
    r && {
      tenantId,
      threadId,
      version: r.version,
      state: r.state,
      runVersions: r.run_versions,
      eventsRemoved: r.events_removed,
      createdAt: r.created_at,
    }
  );
}

/** Writes (or replaces) a thread's snapshot and deletes the events it covers; returns how many. */
export async function saveSnapshotAndTrim(sql: SqlExecutor, snapshot: ThreadSnapshot): Promise<number> {
  const removed = await sql.run(
    `delete from ${sql.table('thread_events')} where tenant_id = ? and thread_id = ? and version <= ?`,
    [snapshot.tenantId, snapshot.threadId, snapshot.version],
  );
  await sql.run(
    `insert into ${sql.table('thread_snapshots')} (tenant_id, thread_id, version, state, run_versions, events_removed)
     values (?, ?, ?, ?::jsonb, ?::jsonb, ?)
     on conflict (tenant_id, thread_id) do update set version = excluded.version, state = excluded.state,
       run_versions = excluded.run_versions,
       events_removed = ${sql.table('thread_snapshots')}.events_removed + excluded.events_removed,
       created_at = now()`,
    [
      snapshot.tenantId,
      snapshot.threadId,
      snapshot.version,
      JSON.stringify(snapshot.state),
      JSON.stringify(snapshot.runVersions),
      removed,
    ],
  );
  return removed;
}

/** Inserts a snapshot for a thread that has none (an import); an existing one is a unique violation. */
export async function insertSnapshot(sql: SqlExecutor, snapshot: ThreadSnapshot): Promise<void> {
  await sql.run(
    `insert into ${sql.table('thread_snapshots')} (tenant_id, thread_id, version, state, run_versions, events_removed)
     values (?, ?, ?, ?::jsonb, ?::jsonb, ?)`,
    [
      snapshot.tenantId,
      snapshot.threadId,
      snapshot.version,
      JSON.stringify(snapshot.state),
      JSON.stringify(snapshot.runVersions),
      snapshot.eventsRemoved,
    ],
  );
}

/**
 * Every thread that has a log or a snapshot, in (tenant, thread) order. `listThreadKeys` finds threads
 * by their version-1 event, which a compacted thread no longer has.
 */
export async function listThreadKeysWithSnapshots(
  sql: SqlExecutor,
  filter: ThreadKeyFilter = {},
): Promise<ThreadKey[]> {
  const where = threadKeyConditions(filter);
  const cond = where.empty ? '' : `and ${where}`;
  const rows = await sql.query<{ tenant_id: string; thread_id: string }>(
    `select tenant_id, thread_id from (
       select tenant_id, thread_id from ${sql.table('thread_events')} where version = 1 ${cond}
       union
       select tenant_id, thread_id from ${sql.table('thread_snapshots')} where true ${cond}
     ) k order by tenant_id, thread_id limit ?`,
    [...where.params, ...where.params, filter.limit ?? 1_000_000],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, threadId: r.thread_id }));
}

/** Finished threads a retention policy may act on: no active or queued run, projection untouched since `idleBefore`. */
export async function listIdleThreads(
  sql: SqlExecutor,
  filter: { tenantId?: string | undefined; idleBefore: string },
): Promise<(ThreadKey & { version: number; updatedAt: string })[]> {
  const params: unknown[] = [filter.idleBefore];
  let tenant = '';
  if (filter.tenantId !== undefined) {
    tenant = 'and tenant_id = ?';
    params.push(filter.tenantId);
  }
  const rows = await sql.query<{ tenant_id: string; thread_id: string; version: number; updated_at: string }>(
    `select tenant_id, thread_id, version, ${isoColumn('updated_at')} from ${sql.table('threads')}
     where status = 'idle' and active_run_id is null and updated_at < ?::timestamptz ${tenant}
       and not exists (select 1 from ${sql.table('runs')} r where r.tenant_id = threads.tenant_id
         and r.thread_id = threads.thread_id and r.status in ('queued', 'running'))
     order by tenant_id, thread_id`,
    params,
  );
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    threadId: r.thread_id,
    version: r.version,
    updatedAt: r.updated_at,
  }));
}

/** Every tenant that has a thread projection (retention goes tenant by tenant). */
export async function listTenantsWithThreads(sql: SqlExecutor): Promise<string[]> {
  const rows = await sql.query<{ tenant_id: string }>(
    `select distinct tenant_id from ${sql.table('threads')} order by tenant_id`,
  );
  return rows.map((r) => r.tenant_id);
}

/** Locks a thread's projection row for the rest of the transaction; returns its status and version. */
export async function lockThread(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
): Promise<{ status: string; version: number } | undefined> {
  const rows = await sql.query<{ status: string; version: number }>(
    `select status, version from ${sql.table('threads')} where tenant_id = ? and thread_id = ? for update`,
    [tenantId, threadId],
  );
  return rows[0];
}
