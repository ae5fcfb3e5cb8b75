import type { RunRow, WaitKind } from '@ratchet/domain';
import { isoColumn } from './sql';

/** The columns of a `runs` row that a run's summary shows, as they come back from Postgres. */
export interface RunSummaryDbRow {
  run_id: string;
  thread_id: string;
  request_id: string;
  agent: string;
  agent_version: number;
  principal_id: string;
  status: RunRow['status'];
  steps: number;
  started_at: string | null;
  ended_at: string | null;
  waiting_on: WaitKind | null;
  waiting_since: string | null;
  waiting_until: string | null;
  waiting_for: string | null;
}

/** The select list of `RunSummaryDbRow` from the `runs` table aliased `t`. */
export const RUN_SUMMARY_COLUMNS = (t: string): string =>
  `${t}.run_id, ${t}.thread_id, ${t}.request_id, ${t}.agent, ${t}.agent_version, ${t}.principal_id, ${t}.status,
   ${t}.steps, ${isoColumn(`${t}.started_at`, 'started_at')}, ${isoColumn(`${t}.ended_at`, 'ended_at')},
   ${t}.waiting_on, ${isoColumn(`${t}.waiting_since`, 'waiting_since')}, ${isoColumn(`${t}.waiting_until`, 'waiting_until')},
   ${t}.waiting_for`;

/** A run's summary (what a run listing shows of it) from its `runs` row. */
export function runSummaryOf(r: RunSummaryDbRow) {
  return {
    runId: r.run_id,
    threadId: r.thread_id,
    requestId: r.request_id,
    agent: r.agent,
    agentVersion: r.agent_version,
    principalId: r.principal_id,
    status: r.status,
    steps: r.steps,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    ...(r.waiting_on && r.waiting_since
      ? {
          waiting: {
            on: r.waiting_on,
            since: r.waiting_since,
            ...(r.waiting_until ? { until: r.waiting_until } : {}),
            ...(r.waiting_for ? { for: r.waiting_for } : {}),
          },
        }
      : {}),
  };
}
