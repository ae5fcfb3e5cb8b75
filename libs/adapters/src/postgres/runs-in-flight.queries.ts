import type { SqlExecutor } from './sql';

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
    `select (select count(*)::int from (
               select 1 from ${sql.table('runs')} where tenant_id = ? and status in ('queued', 'running') limit ?
             ) a) as n,
            exists (select 1 from ${sql.table('runs')} where tenant_id = ? and request_id = ?) as known`,
    [tenantId, Math.max(0, upTo), tenantId, requestId],
  );
  return { activeRuns: rows[0]?.n ?? 0, known: rows[0]?.known === true };
}
