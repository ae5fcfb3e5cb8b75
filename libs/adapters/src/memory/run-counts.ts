import type { RunRow } from '@ratchet/domain';

/** Which of a tenant's runs to count: in flight, in flight holding a key, or waiting for a human. */
export type RunCount = 'in-flight' | 'waiting' | { slotKey: string };

/**
 * The tenant's runs in flight (queued or running, waiting for nothing), those of them holding `slotKey`,
 * or its runs waiting for a human (running and waiting), as the partial indexes of the `runs` table read.
 */
export function countRuns(rows: Iterable<RunRow>, tenantId: string, which: RunCount): number {
  let n = 0;
  for (const r of rows) {
    if (r.tenantId !== tenantId) continue;
    if (which === 'waiting') {
      if (r.status === 'running' && r.waiting !== undefined) n++;
      continue;
    }
    if ((r.status !== 'queued' && r.status !== 'running') || r.waiting !== undefined) continue;
    if (which === 'in-flight' || r.slotKeys?.includes(which.slotKey)) n++;
  }
  return n;
}
