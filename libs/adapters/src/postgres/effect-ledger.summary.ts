import type { SqlExecutor } from './sql';
import { EffectLedgerRepository } from './effect-ledger.repository';
import type { EffectRecord, EffectState } from './effect-ledger.records';

/** What the ledger says about one thread: every effect, and totals by state. */
export interface ThreadEffectsSummary {
  tenantId: string;
  threadId: string;
  effects: Omit<EffectRecord, 'command'>[];
  byState: Record<EffectState, number>;
  dedupHits: number;
  /** Effects waiting for a human (`uncertain`). */
  awaitingHuman: string[];
}

/**
 * The effect ledger of a thread, for operators (`ratchet` CLI): state, attempts, dedup hits and human
 * resolutions of each tool call. Pass `db.sql` of the `tools` schema. Scoped by tenant: another
 * tenant's thread id reads as empty.
 */
export async function threadEffects(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
): Promise<ThreadEffectsSummary> {
  const records = await new EffectLedgerRepository(sql).listByThread(tenantId, threadId);
  const byState: Record<EffectState, number> = { started: 0, succeeded: 0, failed: 0, uncertain: 0, cancelled: 0 };
  let dedupHits = 0;
  const effects = records.map(({ command: _command, ...rest }) => {
    byState[rest.state] += 1;
    dedupHits += rest.dedupHits;
    return rest;
  });
  return {
    tenantId,
    threadId,
    effects,
    byState,
    dedupHits,
    awaitingHuman: effects.filter((e) => e.state === 'uncertain').map((e) => e.key),
  };
}
