import { performance } from 'node:perf_hooks';
import { openServiceDatabase, PgThreadStore } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
// Not the package index (it also exports the jest contract suites, which refuse to load outside jest).
// eslint-disable-next-line import/no-relative-packages -- see above
import { createTestDatabase } from '../../libs/testing/src/test-database';
import { summarize, type Summary } from './stats';

/**
 * What admitting a run costs with a hard bound on the tenant's runs in flight (ADR 0045), A/B: each
 * admission is the transaction a run request's decision is — claim the request (and, bounded, take the
 * tenant's lock and count its runs in flight up to the bound), append, write the projection with a
 * running run — from `concurrency` workers at once, all of one tenant (the case the lock serialises).
 * Unbounded: no lock, no count. Keyed: bounded, and each run holds a concurrency key of 64 customers (one
 * lock and one count more per admission, through the GIN index of the in-flight runs' keys). Throttled:
 * bounded, and each run starts under a throttle of 64 users (one lock and a count of the key's starts in
 * the last minute, through `runs_throttle_idx`). Debounced: bounded, and each request is held under a
 * debounce key of 64 documents (one lock and the key's latest queued request, through
 * `runs_debounce_idx`; the row is a held run). Fresh copy of the migrated template, dropped afterwards.
 */
type AdmissionCase = 'unbounded' | 'bounded' | 'keyed' | 'throttled' | 'debounced';
export interface AdmissionResult {
  concurrency: number;
  cases: Array<{ case: AdmissionCase; perSecond: number; latency: Summary }>;
}
/** Customers the keyed case spreads its runs over (at C=64 most admissions wait for no other of their key). */
const CUSTOMERS = 64;

const BOUND = 1_000; // the default TENANT_MAX_ACTIVE_RUNS: the count reads at most this many index entries

export async function benchAdmission(total: number, concurrency: number): Promise<AdmissionResult> {
  const testDb = await createTestDatabase();
  try {
    const cases: AdmissionResult['cases'] = [];
    // Alternated, so neither case always runs on the warmer database.
    const order: AdmissionCase[] = [
      'unbounded',
      'bounded',
      'keyed',
      'throttled',
      'debounced',
      'debounced',
      'throttled',
      'keyed',
      'bounded',
      'unbounded',
    ];
    for (const which of order) {
      const r = await admissionsOn(testDb.url, total / 2, concurrency, which);
      const seen = cases.find((c) => c.case === r.case);
      if (!seen) cases.push(r);
      else {
        seen.perSecond = (seen.perSecond + r.perSecond) / 2;
        seen.latency = r.latency.median > seen.latency.median ? r.latency : seen.latency;
      }
    }
    return { concurrency, cases };
  } finally {
    await testDb.drop();
  }
}

async function admissionsOn(url: string, total: number, concurrency: number, which: AdmissionCase) {
  const db = await openServiceDatabase(url, 'orchestrator', concurrency + 2);
  const store = new PgThreadStore<unknown>(db, () => ({ status: 'bench', agent: null, activeRunId: null }));
  const tenant = `bench-${which}-${Date.now()}`;
  const bounded = which !== 'unbounded';
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        const threadId = `th-${n}`;
        const key = `customer=${n % CUSTOMERS}`;
        const userKey = `bench:userId=${n % CUSTOMERS}`;
        const now = new Date().toISOString();
        const t0 = performance.now();
        await store.transaction(async (tx) => {
          await tx.claimAndLoadMany([
            {
              consumer: 'bench',
              messageId: `${tenant}-${n}`,
              tenantId: tenant,
              threadId,
              requestId: `req-${n}`,
              ...(bounded ? { activeRunsUpTo: BOUND } : {}),
              ...(which === 'keyed' ? { slotsUpTo: [{ key, max: BOUND }] } : {}),
              ...(which === 'throttled'
                ? { throttleUpTo: { key: userKey, limit: BOUND, since: new Date(Date.now() - 60_000).toISOString() } }
                : {}),
              ...(which === 'debounced' ? { debounceOf: userKey } : {}),
            },
          ]);
          const event = {
            id: `${tenant}-${n}`,
            v: 1,
            type: 'thread.created',
            tenantId: tenant,
            threadId,
            version: 1,
            at: new Date().toISOString(),
            causationId: 'bench',
            correlationId: 'bench',
            data: { createdBy: 'bench' },
          } as ThreadEvent;
          await tx.appendEvents(tenant, threadId, 0, [event]);
          await tx.saveProjection({ tenantId: tenant, threadId, version: 1, state: { n } }, [
            {
              tenantId: tenant,
              runId: `run-${n}`,
              threadId,
              requestId: `req-${n}`,
              agent: 'bench',
              agentVersion: 1,
              principalId: 'bench',
              status: which === 'debounced' ? 'queued' : 'running',
              steps: 0,
              startedAt: which === 'debounced' ? null : now,
              endedAt: null,
              version: 1,
              requestDigest: null,
              outcome: null,
              ...(which === 'keyed' ? { slotKeys: [key] } : {}),
              ...(which === 'throttled' ? { throttleKey: userKey } : {}),
              ...(which === 'debounced'
                ? { debounceKey: userKey, waiting: { on: 'admission' as const, since: now } }
                : {}),
            },
          ]);
        });
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await db.close();
  return {
    case: which,
    perSecond: total / seconds,
    latency: summarize(latencies),
  };
}
