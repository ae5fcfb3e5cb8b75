import type { ActiveRun, AdmissionHold, PendingCall } from './thread.state';

/**
 * What a run that does no work waits for (a named wait): a human's decision on an approval, the outside
 * world's completion of a waitpoint, or an operator's decision on an effect whose outcome is uncertain.
 * While a run waits, its working-time clock stands still, the watchdog leaves it alone, and each wait ends
 * on its own expiry (an approval's or a waitpoint's `expiresAt`). A run not started yet may wait for
 * `admission`: it was queued past the tenant's bound on runs in flight (ADR 0045) and starts when a run
 * of the tenant ends; it has no working time yet.
 */
export type WaitKind = 'approval' | 'waitpoint' | 'operator' | 'admission';

/** The run's current wait: what it waits for, since when, and until when (absent: no expiry of its own). */
export interface RunWait {
  on: WaitKind;
  since: string;
  until?: string | undefined;
  /** For `admission`: the bound it waits for, in words (`concurrency key customer=42 at its max of 5`). */
  for?: string | undefined;
}

/** The calls' statuses that are waits (the call does no work until someone outside the run decides). */
const WAITING: ReadonlySet<PendingCall['status']> = new Set(['awaiting_approval', 'awaiting_waitpoint', 'uncertain']);

/**
 * What `run` waits for now, from its calls: in the tool phase, when every call still open waits for a
 * decision (none is running). An approval is named first, then a waitpoint (the waits that expire), then
 * an operator; `until` is the earliest expiry of the approvals and waitpoints open.
 */
export function waitOf(run: ActiveRun): Omit<RunWait, 'since'> | undefined {
  if (run.phase !== 'tools') return undefined;
  const open = run.calls.filter((c) => isOpen(c.status));
  if (open.length === 0 || !open.every((c) => WAITING.has(c.status))) return undefined;
  const expiries = open
    .map((c) =>
      c.status === 'awaiting_approval'
        ? c.approval?.expiresAt
        : c.status === 'awaiting_waitpoint'
          ? c.waitpoint?.expiresAt
          : undefined,
    )
    .filter((t): t is string => t !== undefined)
    .sort();
  const until = expiries[0] ? { until: expiries[0] } : {};
  if (open.some((c) => c.status === 'awaiting_approval')) return { on: 'approval', ...until };
  if (open.some((c) => c.status === 'awaiting_waitpoint')) return { on: 'waitpoint', ...until };
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
  return (
    status === 'awaiting_approval' ||
    status === 'requested' ||
    status === 'awaiting_waitpoint' ||
    status === 'uncertain'
  );
}

/** What a held run waits for, in words: the run's status says it (API, CLI, console), and so does its expiry. */
export function heldFor(held: AdmissionHold): string {
  switch (held.bound) {
    case 'slot':
      return `concurrency key ${held.key} at its max of ${held.limit} runs in flight`;
    case 'debounce':
      return `${held.periodSeconds} s without a later request of debounce key ${held.key}`;
    case 'throttle':
      return `a start under throttle ${held.key} (at most ${held.limit} starts in ${held.periodSeconds} s)`;
    case 'tenant.runs_limit':
      return `the tenant's bound of ${held.limit} runs in flight`;
  }
}
