import type { SqlExecutor } from '@ratchet/adapters';

/**
 * What the fleet suites (scale-out, drains, a bus or database failing under load) publish and count: many
 * demo runs asking for the weather in two cities each, and the effect ledger's rows of their tool calls,
 * to show that every effect ran once.
 */

/** A city name of letters only (the demo agent's script reads city names as [A-Za-z]+), distinct per `n`. */
export function demoCity(n: number): string {
  return (
    'C' +
    n
      .toString(26)
      .split('')
      .map((d) => String.fromCharCode(97 + parseInt(d, 26)))
      .join('')
  );
}

/** Run request `i` of a fleet suite: thread `<name>-thread-<i>`, the weather in two cities of its own. */
export function weatherRunRequest(name: string, i: number) {
  return {
    requestId: `${name}-${i}`,
    threadId: `${name}-thread-${i}`,
    agent: 'demo',
    input: [
      { role: 'user' as const, content: `What is the weather in ${demoCity(2 * i)} and ${demoCity(2 * i + 1)}?` },
    ],
    principal: { id: 'alice', roles: ['runner'] },
  };
}

/** One row of the effect ledger (schema `tools`): how often its effect was attempted, and how it ended. */
export interface LedgerEffectRow {
  key: string;
  run_id: string;
  call_id: string;
  attempts: number;
  state: string;
}

/** The tenant's effect-ledger rows; pass the `tools` schema's `db.sql`. */
export function ledgerEffects(sql: SqlExecutor, tenantId: string): Promise<LedgerEffectRow[]> {
  return sql.query<LedgerEffectRow>(
    `select key, run_id, call_id, attempts, state from ${sql.table('effects')} where tenant_id = ?`,
    [tenantId],
  );
}
