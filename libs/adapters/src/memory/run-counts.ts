import type { RunRow } from '@ratchet/domain';

/** Which of a tenant's runs to count: in flight, in flight holding a key, or waiting for a human. */
export type RunCount = 'in-flight' | 'waiting' | { slotKey: string } | { throttleKey: string; since: string };

/**
 * The tenant's runs in flight (queued or running, waiting for nothing), those of them holding `slotKey`,
 * or its runs waiting for a human (running and waiting), or its runs with a throttle key that started after
 * `since`, as the partial indexes of the `runs` table read.
 */
export function countRuns(rows: Iterable<RunRow>, tenantId: string, which: RunCount): number {
  let n = 0;
  for (const r of rows) {
    if (r.tenantId !== tenantId) continue;
    if (typeof which === 'object' && 'throttleKey' in which) {
      // Starts with the key after `since`, whatever the run's status now (an ended run's start counts).
      if (r.throttleKey === which.throttleKey && r.startedAt !== null && r.startedAt > which.since) n++;
      continue;
    }
    if (which === 'waiting') {
      if (r.status === 'running' && r.waiting !== undefined) n++;
      continue;
    }
    if ((r.status !== 'queued' && r.status !== 'running') || r.waiting !== undefined) continue;
    if (which === 'in-flight' || ('slotKey' in which && r.slotKeys?.includes(which.slotKey))) n++;
  }
  return n;
}

/** The tenant's queued run of a debounce key requested last (by its wait's start, then run id), as `runs_debounce_idx` reads. */
export function latestQueued(rows: Iterable<RunRow>, tenantId: string, key: string): string | undefined {
  const queued = [...rows].filter((r) => r.tenantId === tenantId && r.debounceKey === key && r.status === 'queued');
  const since = (r: RunRow) => r.waiting?.since ?? '';
  queued.sort((a, b) => since(b).localeCompare(since(a)) || b.runId.localeCompare(a.runId));
  return queued[0]?.runId;
}
