import type { RunRow } from '../ports';
import type { ThreadRecord } from './thread.record';
import type { ThreadState } from './thread.state';

/**
 * The queryable rows derived from a thread's record: the columns of `threads` and the `runs` rows. Pure,
 * shared by the orchestrator (which writes them with every append, from the record of its decision's
 * events) and `ratchet rebuild` / `replay` (which derive them from the whole log), so both always agree.
 */

/** The queryable columns of the `threads` projection. */
export function threadColumns(state: ThreadState): {
  status: string;
  agent: string | null;
  activeRunId: string | null;
} {
  const status = state.active ? 'running' : state.queue.length > 0 ? 'queued' : 'idle';
  return { status, agent: state.active?.agent ?? null, activeRunId: state.active?.runId ?? null };
}

/**
 * The `runs` rows of a record's runs, each tagged with the version of the last event that changed it,
 * oldest first. For a decision's record (`foldRecord(recordFrom(before), events)`): the rows its events
 * touched; for a whole log's: every row as the orchestrator left it.
 */
export function runRowsOf(tenantId: string, threadId: string, record: ThreadRecord): RunRow[] {
  return Object.values(record.runs)
    .map((r): RunRow => ({
      tenantId,
      runId: r.runId,
      threadId,
      requestId: r.requestId,
      agent: r.agent,
      agentVersion: r.agentVersion,
      principalId: r.principalId,
      status: r.status,
      steps: r.steps,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      version: record.runVersions[r.runId] ?? 0,
      requestDigest: r.requestDigest ?? null,
      outcome: r.outcome ?? null,
      ...(r.waiting ? { waiting: r.waiting } : {}),
      ...(r.slotKeys ? { slotKeys: r.slotKeys } : {}),
      ...(r.throttleKey ? { throttleKey: r.throttleKey } : {}),
      ...(r.debounceKey ? { debounceKey: r.debounceKey } : {}),
      ...(r.queuedUntil ? { queuedUntil: r.queuedUntil } : {}),
      ...(r.priority ? { priority: r.priority } : {}),
    }))
    .sort((a, b) => a.version - b.version || a.runId.localeCompare(b.runId));
}
