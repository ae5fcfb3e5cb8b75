/** What the store says about a thread about to be erased. */
export interface ErasureFacts {
  /** The thread's projection row, locked for the erasure; undefined when there is none. */
  thread: { status: string } | undefined;
  /** Its runs still queued or running. */
  activeRuns: number;
  /** Whether a tombstone of an earlier erasure of this thread is there. */
  tombstone: boolean;
}

/**
 * Whether `DELETE /v1/threads/{id}` erases, given the facts read in its transaction:
 * - `erase`: the thread is there and idle (no run queued or running);
 * - `busy`: a run is going — refused (409), nothing removed: cancel it or let it end first;
 * - `already`: erased before (its tombstone is there) — answered as done, the stream purged again;
 * - `not-found`: never there (or another tenant's: ids are names, not capabilities).
 */
export type ErasureDecision = 'erase' | 'busy' | 'already' | 'not-found';

export function decideErasure(f: ErasureFacts): ErasureDecision {
  if (f.thread) return f.thread.status !== 'idle' || f.activeRuns > 0 ? 'busy' : 'erase';
  if (f.activeRuns > 0) return 'busy';
  return f.tombstone ? 'already' : 'not-found';
}
