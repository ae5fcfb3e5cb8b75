import { runIdFor, threadIdFor } from '@ratchet/contracts';
import { MAX_CATCH_UP, type Schedule } from './schedule';
import { tickClock } from './schedule.timing';

/** What the ticker knows when it decides a schedule's due ticks. */
export interface TickContext {
  /** Every tick at or before this instant was decided already (the schedule's cursor). */
  decidedThrough: string;
  now: string;
  /** The run of the last tick that started one, while it is still going. */
  activeRun?: { runId: string; threadId: string } | undefined;
  /** A tick at most this late is on time; a later one was missed, and the catch-up policy applies. */
  graceMs: number;
}

/** The run request a tick makes: its requestId is derived from (schedule, tick), so a tick starts one run. */
export interface TickRunRequest {
  requestId: string;
  threadId?: string | undefined;
  agent: string;
  input: [{ role: 'user'; content: string }];
  principal: { id: string; roles: string[] };
  metadata: Record<string, string>;
  concurrency: 'enqueue' | 'interrupt';
  webhookUrl?: string | undefined;
}

export type TickDecision =
  | {
      at: string;
      action: 'start';
      request: TickRunRequest;
      /** cancel-previous with a thread per tick: the run to cancel first. */
      cancel?: { runId: string; threadId: string } | undefined;
    }
  | { at: string; action: 'skip'; reason: 'overlap' | 'missed' };

export interface ScheduleDecision {
  /** The ticks decided now, oldest first (missed ticks skipped in bulk are counted, not listed). */
  ticks: TickDecision[];
  /** Missed ticks the catch-up policy skipped without listing them (at least this many). */
  missedSkipped: number;
  /** The new cursor: every tick at or before it is decided. */
  decidedThrough: string;
  /** When the schedule is next due; null when it never is again (paused, past its end). */
  nextDueAt: string | null;
}

/** Ticks within the grace that one decision starts at most (more means a tiny interval and a long stall). */
const ON_TIME_LIMIT = 1000;

/** The request id of a schedule's tick: the same on every orchestrator, before and after any crash. */
export function tickRequestId(scheduleId: string, at: Date | string): string {
  return `schedule:${scheduleId}:${new Date(at).toISOString()}`;
}

/** The one thread of a `thread: shared` schedule. */
export function scheduleThreadId(tenantId: string, scheduleId: string): string {
  return threadIdFor(tenantId, `schedule:${scheduleId}`);
}

/**
 * Which of a schedule's ticks are due now and what each does. Pure: time comes in on the context, and
 * the same input always gives the same requests, so any orchestrator (or the same one after a crash)
 * that decides a tick asks for the same run.
 */
export function decideTicks(schedule: Schedule, ctx: TickContext): ScheduleDecision {
  const now = new Date(ctx.now);
  const after = new Date(ctx.decidedThrough);
  const clock = tickClock(schedule.timing, new Date(schedule.anchorAt));
  const end = schedule.endAt ? new Date(schedule.endAt) : undefined;
  const through = end && end < now ? end : now;
  const decidedThrough = new Date(Math.max(now.getTime(), after.getTime())).toISOString();
  const nextDue = (from: Date): string | null => {
    if (schedule.paused) return null;
    const next = clock.next(from);
    return next && (!end || next <= end) ? next.toISOString() : null;
  };
  if (schedule.paused || through <= after)
    return { ticks: [], missedSkipped: 0, decidedThrough, nextDueAt: nextDue(new Date(decidedThrough)) };

  const onTimeFrom = new Date(Math.max(after.getTime(), now.getTime() - ctx.graceMs));
  const onTime: Date[] = [];
  for (let t = clock.next(onTimeFrom); t && t <= through && onTime.length < ON_TIME_LIMIT; t = clock.next(t))
    onTime.push(t);

  // Missed: after the cursor, and more than the grace late.
  const missedThrough = new Date(Math.min(through.getTime(), onTimeFrom.getTime()));
  const keep = catchUpKeeps(schedule);
  const missed = missedThrough > after ? clock.latest(keep + 1, missedThrough).filter((t) => t > after) : [];
  const started = missed.slice(Math.max(0, missed.length - keep));
  const missedSkipped = missed.length - started.length;

  const ticks: TickDecision[] = [];
  let active = ctx.activeRun;
  for (const at of [...started, ...onTime]) {
    const decision = decideTick(schedule, at, active);
    ticks.push(decision);
    if (decision.action === 'start')
      active = {
        runId: runIdFor(schedule.tenantId, decision.request.requestId),
        threadId: decision.request.threadId ?? threadIdFor(schedule.tenantId, decision.request.requestId),
      };
  }
  return { ticks, missedSkipped, decidedThrough, nextDueAt: nextDue(new Date(decidedThrough)) };
}

function catchUpKeeps(schedule: Schedule): number {
  const c = schedule.catchUp;
  switch (c.kind) {
    case 'skip':
      return 0;
    case 'once':
      return 1;
    case 'all':
      return Math.max(1, Math.min(MAX_CATCH_UP, c.max));
    default: {
      const _exhaustive: never = c;
      return _exhaustive;
    }
  }
}

function decideTick(schedule: Schedule, at: Date, active: TickContext['activeRun']): TickDecision {
  const tickAt = at.toISOString();
  const request: TickRunRequest = {
    requestId: tickRequestId(schedule.id, at),
    ...(schedule.thread === 'shared' ? { threadId: scheduleThreadId(schedule.tenantId, schedule.id) } : {}),
    agent: schedule.agent,
    input: [{ role: 'user', content: schedule.input }],
    principal: schedule.principal,
    metadata: { scheduleId: schedule.id, tickAt },
    concurrency: 'enqueue',
    ...(schedule.webhookUrl ? { webhookUrl: schedule.webhookUrl } : {}),
  };
  if (!active) return { at: tickAt, action: 'start', request };
  switch (schedule.overlap) {
    case 'skip':
      return { at: tickAt, action: 'skip', reason: 'overlap' };
    case 'enqueue':
      // Validation refuses enqueue with a thread per tick: only runs of one thread wait for each other.
      return { at: tickAt, action: 'start', request };
    case 'cancel-previous':
      return schedule.thread === 'shared'
        ? { at: tickAt, action: 'start', request: { ...request, concurrency: 'interrupt' } }
        : { at: tickAt, action: 'start', request, cancel: active };
    default: {
      const _exhaustive: never = schedule.overlap;
      return _exhaustive;
    }
  }
}

/**
 * The cursor of a schedule that starts (or resumes) at `now`: nothing before it is caught up — a pause
 * is not downtime — and it is next due at its first tick after `now`.
 */
export function freshCursor(schedule: Schedule, now: string): { decidedThrough: string; nextDueAt: string | null } {
  return { decidedThrough: now, nextDueAt: decideTicks(schedule, { decidedThrough: now, now, graceMs: 0 }).nextDueAt };
}
