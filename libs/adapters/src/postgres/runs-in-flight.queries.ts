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
