import type { SqlExecutor } from './sql';

/**
 * The count of a tenant's runs in flight, up to a bound, as a scalar subquery: `tenant` and `upTo` are SQL
 * expressions (placeholders or outer columns). Its predicate is the partial index's
 * (`runs_in_flight_idx ... where status in ('queued', 'running')`), so the count reads only that index.
 */
export function runsInFlightCount(sql: SqlExecutor, tenant: string, upTo: string): string {
  return `(select count(*)::int from (
     select 1 from ${sql.table('runs')} r where r.tenant_id = ${tenant} and r.status in ('queued', 'running')
     limit ${upTo}
   ) a)`;
}

/** What a run request meets at admission: the tenant's runs in flight (up to the bound) and whether it has a run. */
export interface RunAdmissionFacts {
  activeRuns: number;
  known: boolean;
}

/**
 * The tenant's runs queued or running, counted up to `upTo` (the bound on its runs in flight), and whether
 * `requestId` already started a run. The count goes through the partial index of the runs in flight, so it
 * reads at most `upTo` index entries however many of the tenant's runs have ended. The claim of a run
 * request counts the same rows (pg-thread-store), which is where the bound is decided.
 */
export async function runAdmissionFacts(
  sql: SqlExecutor,
  tenantId: string,
  requestId: string,
  upTo: number,
): Promise<RunAdmissionFacts> {
  const rows = await sql.query<{ n: number; known: boolean }>(
    `select ${runsInFlightCount(sql, '?', '?')} as n,
            exists (select 1 from ${sql.table('runs')} where tenant_id = ? and request_id = ?) as known`,
    [tenantId, Math.max(0, upTo), tenantId, requestId],
  );
  return { activeRuns: rows[0]?.n ?? 0, known: rows[0]?.known === true };
}
