import type { SqlExecutor } from './sql';

/** A run a revocation stops. */
export interface RunOfPrincipal {
  runId: string;
  threadId: string;
  status: 'queued' | 'running';
}

/**
 * The queued and running runs a principal started in a tenant (a partial index of their own);
 * `startedBefore`: only running runs started before that time (a revocation of some of its tokens).
 */
export async function activeRunsOfPrincipal(
  sql: SqlExecutor,
  tenantId: string,
  principalId: string,
  startedBefore?: string,
): Promise<RunOfPrincipal[]> {
  const rows = await sql.query<{ run_id: string; thread_id: string; status: 'queued' | 'running' }>(
    `select run_id, thread_id, status from ${sql.table('runs')}
      where tenant_id = ? and principal_id = ? and status in ('queued', 'running')
        ${startedBefore === undefined ? '' : 'and started_at < ?::timestamptz'}
      order by run_id`,
    startedBefore === undefined ? [tenantId, principalId] : [tenantId, principalId, startedBefore],
  );
  return rows.map((r) => ({ runId: r.run_id, threadId: r.thread_id, status: r.status }));
}
