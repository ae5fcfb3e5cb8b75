import { isoColumn, type SqlExecutor } from './sql';

export type EffectState = 'started' | 'succeeded' | 'failed' | 'uncertain';

export interface StartEffect {
  /** The idempotency key: one row per effect, however often the command is delivered. */
  key: string;
  tenantId: string;
  threadId: string;
  runId: string;
  callId: string;
  tool: string;
  kind: string;
}

export interface EffectRecord extends StartEffect {
  state: EffectState;
  attempts: number;
  result: unknown;
  startedAt: string;
  finishedAt: string | null;
  updatedAt: string;
}

interface EffectDbRow {
  key: string;
  tenant_id: string;
  thread_id: string;
  run_id: string;
  call_id: string;
  tool: string;
  kind: string;
  state: EffectState;
  attempts: number;
  result: unknown;
  started_at: string;
  finished_at: string | null;
  updated_at: string;
}

const COLUMNS = `key, tenant_id, thread_id, run_id, call_id, tool, kind, state, attempts, result,
  ${isoColumn('started_at')}, ${isoColumn('finished_at')}, ${isoColumn('updated_at')}`;

/**
 * The tool executor's effect ledger (schema `tools`). Pass a ServiceTx so the ledger write commits with
 * the inbox claim and the outbox message it goes with; `db.sql` works for reads.
 */
export class EffectLedgerRepository {
  constructor(private readonly sql: SqlExecutor) {}

  async get(key: string): Promise<EffectRecord | undefined> {
    const rows = await this.sql.query<EffectDbRow>(
      `select ${COLUMNS} from ${this.sql.table('effects')} where key = ?`,
      [key],
    );
    return rows[0] && toRecord(rows[0]);
  }

  /**
   * Claims the key for a new effect. Returns 'inserted' when this call created the row, otherwise the
   * existing row (a concurrent claimer's insert is waited for, so the row returned is committed).
   */
  async recordStarted(effect: StartEffect): Promise<'inserted' | EffectRecord> {
    const inserted = await this.sql.run(
      `insert into ${this.sql.table('effects')} (key, tenant_id, thread_id, run_id, call_id, tool, kind, state, attempts)
       values (?, ?, ?, ?, ?, ?, ?, 'started', 1) on conflict (key) do nothing`,
      [effect.key, effect.tenantId, effect.threadId, effect.runId, effect.callId, effect.tool, effect.kind],
    );
    if (inserted === 1) return 'inserted';
    const existing = await this.get(effect.key);
    if (!existing) throw new Error(`effect ${effect.key}: insert conflicted but no row is visible`);
    return existing;
  }

  /** A retry of an effect that is still `started` or `uncertain`: counts the attempt. */
  async recordAttempt(key: string): Promise<number> {
    const rows = await this.sql.query<{ attempts: number }>(
      `update ${this.sql.table('effects')} set attempts = attempts + 1, state = 'started', updated_at = now()
       where key = ? returning attempts`,
      [key],
    );
    const row = rows[0];
    if (!row) throw new Error(`effect ${key} was never started`);
    return row.attempts;
  }

  async recordOutcome(key: string, state: Exclude<EffectState, 'started'>, result: unknown): Promise<void> {
    const updated = await this.sql.run(
      `update ${this.sql.table('effects')}
       set state = ?, result = ?::jsonb, finished_at = now(), updated_at = now() where key = ?`,
      [state, result === undefined ? null : JSON.stringify(result), key],
    );
    if (updated !== 1) throw new Error(`effect ${key} was never started`);
  }

  async listByThread(tenantId: string, threadId: string): Promise<EffectRecord[]> {
    const rows = await this.sql.query<EffectDbRow>(
      `select ${COLUMNS} from ${this.sql.table('effects')}
       where tenant_id = ? and thread_id = ? order by started_at, key`,
      [tenantId, threadId],
    );
    return rows.map(toRecord);
  }
}

function toRecord(r: EffectDbRow): EffectRecord {
  return {
    key: r.key,
    tenantId: r.tenant_id,
    threadId: r.thread_id,
    runId: r.run_id,
    callId: r.call_id,
    tool: r.tool,
    kind: r.kind,
    state: r.state,
    attempts: r.attempts,
    result: r.result,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    updatedAt: r.updated_at,
  };
}
