import type { ActiveRun, PendingCall } from './thread.state';

/**
 * What a run that does no work waits for (a named wait): a human's decision on an approval, or an
 * operator's on an effect whose outcome is uncertain. While a run waits, its working-time clock stands
 * still, the watchdog leaves it alone, and each wait ends on its own expiry (an approval's `expiresAt`).
 */
export type WaitKind = 'approval' | 'operator';

/** The run's current wait: what it waits for, since when, and until when (absent: no expiry of its own). */
export interface RunWait {
  on: WaitKind;
  since: string;
  until?: string | undefined;
}

/**
 * What `run` waits for now, from its calls: in the tool phase, when every call still open waits for a
 * decision (none is running). An approval is named before an operator (it is the wait that expires); its
 * `until` is the earliest expiry of the approvals asked.
 */
export function waitOf(run: ActiveRun): Omit<RunWait, 'since'> | undefined {
  if (run.phase !== 'tools') return undefined;
  const open = run.calls.filter((c) => isOpen(c.status));
  if (open.length === 0 || !open.every((c) => c.status === 'awaiting_approval' || c.status === 'uncertain'))
    return undefined;
  const expiries = open
    .filter((c) => c.status === 'awaiting_approval')
    .map((c) => c.approval?.expiresAt)
    .filter((t): t is string => t !== undefined)
    .sort();
  if (open.some((c) => c.status === 'awaiting_approval'))
    return { on: 'approval', ...(expiries[0] ? { until: expiries[0] } : {}) };
  return { on: 'operator' };
}

/**
 * The run after an event at `at`: a wait that began is stamped with its start, one that ended adds its
 * length to `waitedMs`. Event times come from the log, so every replay folds the same clock, and a run
 * that waits while no orchestrator runs does not count that time as work.
 */
export function withWaitClock(run: ActiveRun, at: string): ActiveRun {
  const now = waitOf(run);
  const was = run.waiting;
  if (now) {
    if (was && was.on === now.on && was.until === now.until) return run;
    return { ...run, waiting: { on: now.on, since: was?.since ?? at, ...(now.until ? { until: now.until } : {}) } };
  }
  if (!was) return run;
  const { waiting: _ended, ...rest } = run;
  return { ...rest, waitedMs: (run.waitedMs ?? 0) + Math.max(0, Date.parse(at) - Date.parse(was.since)) };
}

/** The run's working time at `at`, in ms: from its start, minus every wait (the current one up to `at`). */
export function workingMs(run: ActiveRun, at: string): number {
  const waiting = run.waiting ? Math.max(0, Date.parse(at) - Date.parse(run.waiting.since)) : 0;
  return Math.max(0, Date.parse(at) - Date.parse(run.startedAt) - (run.waitedMs ?? 0) - waiting);
}

function isOpen(status: PendingCall['status']): boolean {
  return status === 'awaiting_approval' || status === 'requested' || status === 'uncertain';
}
