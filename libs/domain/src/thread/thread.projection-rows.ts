import type { ThreadEvent } from '@ratchet/contracts';
import type { RunRow } from '../ports';
import type { ThreadState } from './thread.state';

/**
 * The queryable rows derived from a thread's state: the columns of `threads` and the `runs` rows. Pure,
 * shared by the orchestrator (which writes them with every append) and `ratchet rebuild` / `replay`
 * (which derive them from the whole log), so both always agree.
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

/** The `runs` rows touched by these events, for queries by status, agent and request id. */
export function runRows(
  tenantId: string,
  threadId: string,
  state: ThreadState,
  events: readonly ThreadEvent[],
  version: number,
): RunRow[] {
  const touched = new Set(events.map((e) => e.runId).filter((id): id is string => id !== undefined));
  const rows: RunRow[] = [];
  for (const runId of touched) {
    const row = runRow(tenantId, threadId, state, runId, version);
    if (row) rows.push(row);
  }
  return rows;
}

/**
 * Every `runs` row of a thread as the orchestrator would have left it after writing this whole log:
 * each run tagged with the version of the last event that touched it.
 */
export function runRowsFromLog(
  tenantId: string,
  threadId: string,
  state: ThreadState,
  events: readonly ThreadEvent[],
): RunRow[] {
  const lastTouch = new Map<string, number>();
  for (const e of events) if (e.runId !== undefined) lastTouch.set(e.runId, e.version);
  const rows: RunRow[] = [];
  for (const [runId, version] of lastTouch) {
    const row = runRow(tenantId, threadId, state, runId, version);
    if (row) rows.push(row);
  }
  return rows.sort((a, b) => a.version - b.version || a.runId.localeCompare(b.runId));
}

function runRow(tenantId: string, threadId: string, state: ThreadState, runId: string, version: number) {
  const r = state.runs[runId];
  if (!r) return undefined;
  const row: RunRow = {
    tenantId,
    runId,
    threadId,
    requestId: r.requestId,
    agent: r.agent,
    agentVersion: r.agentVersion,
    principalId: r.principalId,
    status: r.status,
    steps: r.steps,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    version,
  };
  return row;
}
