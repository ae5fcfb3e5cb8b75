import type { SqlExecutor } from './sql';

export interface IdempotencyRecord {
  tenantId: string;
  key: string;
  requestDigest: string;
  runId: string;
  threadId: string;
}

/** What a key says when it is taken: first use, the same request again, or a different one. */
export type KeyUse =
  { use: 'first' } | { use: 'repeat'; record: IdempotencyRecord } | { use: 'conflict'; record: IdempotencyRecord };

/** The gateway's record of the idempotency keys of run requests (schema `gateway`). */
export class IdempotencyKeysRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /**
   * Takes a key for a request, atomically: the first request with it records its digest; any later one
   * is a repeat (same digest) or a conflict (another digest). Concurrent first uses: one wins, the other
   * sees the winner's row.
   */
  async take(record: IdempotencyRecord): Promise<KeyUse> {
    const rows = await this.sql.query<{
      inserted: boolean;
      request_digest: string;
      run_id: string;
      thread_id: string;
    }>(
      `with ins as (
         insert into ${this.sql.table('idempotency_keys')} (tenant_id, key, request_digest, run_id, thread_id)
         values (?, ?, ?, ?, ?) on conflict do nothing returning request_digest, run_id, thread_id)
       select true as inserted, request_digest, run_id, thread_id from ins
       union all
       select false, request_digest, run_id, thread_id from ${this.sql.table('idempotency_keys')}
        where tenant_id = ? and key = ? and not exists (select 1 from ins)`,
      [record.tenantId, record.key, record.requestDigest, record.runId, record.threadId, record.tenantId, record.key],
    );
    let row = rows[0];
    // Lost a race with a concurrent first use: its row is committed now; read it.
    if (!row) {
      row = (
        await this.sql.query<{ inserted: boolean; request_digest: string; run_id: string; thread_id: string }>(
          `select false as inserted, request_digest, run_id, thread_id from ${this.sql.table('idempotency_keys')}
            where tenant_id = ? and key = ?`,
          [record.tenantId, record.key],
        )
      )[0];
    }
    if (!row) throw new Error(`idempotency key ${record.key}: insert conflicted but no row is visible`);
    if (row.inserted) return { use: 'first' };
    const found: IdempotencyRecord = {
      tenantId: record.tenantId,
      key: record.key,
      requestDigest: row.request_digest,
      runId: row.run_id,
      threadId: row.thread_id,
    };
    return row.request_digest === record.requestDigest
      ? { use: 'repeat', record: found }
      : { use: 'conflict', record: found };
  }
}
