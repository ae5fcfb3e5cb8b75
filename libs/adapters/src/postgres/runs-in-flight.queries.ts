import type { SqlExecutor } from './sql';

/**
 * The count of a tenant's runs in flight, up to a bound, as a scalar subquery: `tenant` and `upTo` are SQL
 * expressions (placeholders or outer columns). Runs waiting for a human are not in flight (they use no
 * worker). Its predicate is the partial index's (`runs_in_flight_idx ... where status in ('queued',
 * 'running') and waiting_on is null`), so the count reads only that index.
 */
export function runsInFlightCount(sql: SqlExecutor, tenant: string, upTo: string): string {
  return `(select count(*)::int from (
     select 1 from ${sql.table('runs')} r
      where r.tenant_id = ${tenant} and r.status in ('queued', 'running') and r.waiting_on is null
     limit ${upTo}
   ) a)`;
}

/** The count of a tenant's runs waiting for a human, up to a bound (the partial index `runs_waiting_idx`). */
export function runsWaitingCount(sql: SqlExecutor, tenant: string, upTo: string): string {
  return `(select count(*)::int from (
     select 1 from ${sql.table('runs')} r
      where r.tenant_id = ${tenant} and r.status = 'running' and r.waiting_on is not null
     limit ${upTo}
   ) a)`;
}

/**
 * What a run request meets at admission: the tenant's runs in flight and waiting (each up to its bound)
 * and whether it has a run.
 */
export interface RunAdmissionFacts {
  activeRuns: number;
  waitingRuns: number;
  known: boolean;
}

/**
 * The tenant's runs in flight (queued, or running and not waiting) counted up to `upTo.active`, its runs
 * waiting for a human up to `upTo.waiting`, and whether `requestId` already started a run. Each count goes
 * through its partial index, so it reads at most its bound's index entries however many of the tenant's
 * runs have ended. The claim of a run request counts the same rows (pg-thread-store), which is where the
 * bounds are decided.
 */
export async function runAdmissionFacts(
  sql: SqlExecutor,
  tenantId: string,
  requestId: string,
  upTo: { active: number; waiting: number },
): Promise<RunAdmissionFacts> {
  const rows = await sql.query<{ n: number; w: number; known: boolean }>(
    `select ${runsInFlightCount(sql, '?', '?')} as n, ${runsWaitingCount(sql, '?', '?')} as w,
            exists (select 1 from ${sql.table('runs')} where tenant_id = ? and request_id = ?) as known`,
    [tenantId, Math.max(0, upTo.active), tenantId, Math.max(0, upTo.waiting), tenantId, requestId],
  );
  return { activeRuns: rows[0]?.n ?? 0, waitingRuns: rows[0]?.w ?? 0, known: rows[0]?.known === true };
}

/** A run held for admission that the tenant has room for now: the first held run of its thread. */
export interface AdmissionCandidate {
  tenantId: string;
  threadId: string;
  runId: string;
}

/**
 * The runs held for admission (`waiting_on = 'admission'`, ADR 0045) to try to start now: per tenant, its
 * oldest held runs, one per thread (the thread's next), as many as the tenant has room for under `limit`,
 * oldest first across tenants, at most `batch`. Advice only: the admission itself counts again under the
 * tenant's lock. Reads the partial index `runs_held_idx`.
 */
export async function admissionCandidates(
  sql: SqlExecutor,
  limit: number,
  batch: number,
): Promise<AdmissionCandidate[]> {
  const rows = await sql.query<{ tenant_id: string; thread_id: string; run_id: string }>(
    `with heads as (
       select distinct on (r.tenant_id, r.thread_id) r.tenant_id, r.thread_id, r.run_id, r.waiting_since, r.version
         from ${sql.table('runs')} r
        where r.status = 'queued' and r.waiting_on = 'admission'
        order by r.tenant_id, r.thread_id, r.waiting_since, r.version
     ), ranked as (
       select h.*, row_number() over (partition by h.tenant_id order by h.waiting_since, h.version) as n from heads h
     ), room as (
       select t.tenant_id, ?::int - ${runsInFlightCount(sql, 't.tenant_id', '?::int')} as free
         from (select distinct tenant_id from heads) t
     )
     select r.tenant_id, r.thread_id, r.run_id
       from ranked r join room using (tenant_id)
      where r.n <= room.free
      order by r.waiting_since, r.version
      limit ?`,
    [limit, limit, batch],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, threadId: r.thread_id, runId: r.run_id }));
}
