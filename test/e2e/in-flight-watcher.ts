import type { TestStack } from './stack';

/** The most runs seen in flight at once, in all and per concurrency key. */
export interface InFlightSeen {
  most: number;
  mostPerKey: Map<string, number>;
}

/**
 * An outside reader of what the bounds count (ADR 0045): the committed `runs` rows of `tenant` in flight
 * (queued or running, waiting for nothing), read every 25 ms until `stop()`, which returns the most it saw
 * at once — in all and per key.
 */
export function watchInFlight(stack: TestStack, tenant: string): { stop(): Promise<InFlightSeen> } {
  const sql = stack.orchestratorDb.sql;
  const seen: InFlightSeen = { most: 0, mostPerKey: new Map() };
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const rows = await sql.query<{ key: string | null; n: number; total: number }>(
        `select k as key, count(distinct r.run_id)::int as n, grouping(k) as total
           from ${sql.table('runs')} r left join lateral unnest(r.slot_keys) k on true
          where r.tenant_id = ? and r.status in ('queued', 'running') and r.waiting_on is null
          group by rollup (k)`,
        [tenant],
      );
      for (const r of rows) {
        // The rollup's total row counts every run once; the others count a key's runs (runs with none: no key).
        if (r.total === 1) seen.most = Math.max(seen.most, r.n);
        else if (r.key !== null) seen.mostPerKey.set(r.key, Math.max(seen.mostPerKey.get(r.key) ?? 0, r.n));
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      return seen;
    },
  };
}
