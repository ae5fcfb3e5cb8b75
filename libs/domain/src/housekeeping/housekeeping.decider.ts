import type { ScheduleTiming } from '../schedules/schedule';
import { tickClock } from '../schedules/schedule.timing';

/**
 * The deployment's built-in housekeeping: one schedule (operator configuration, not a tenant's), whose
 * tick prunes what has outlived its age. Each kind names what it removes and what it never touches.
 */
export type HousekeepingTask =
  /** The thread retention policy (RATCHET_RETENTION: compact or drop finished, idle threads), at the tick's time. */
  | { kind: 'threads'; now: string }
  /** Dedup inbox rows processed before `before`, in every service schema. */
  | { kind: 'inbox'; before: string }
  /** Failed-message records older than `before`, in every service schema. */
  | { kind: 'failed-messages'; before: string }
  /** Webhook deliveries that ended (delivered or dead) before `before`; pending ones never. */
  | { kind: 'webhook-deliveries'; before: string }
  /** Records of schedule ticks decided before `before` (the schedules' cursors are elsewhere). */
  | { kind: 'schedule-ticks'; before: string }
  /** Idempotency-Keys (and their stored answers) taken before `before`. */
  | { kind: 'idempotency-keys'; before: string };

export type HousekeepingTaskKind = HousekeepingTask['kind'];

export interface HousekeepingSettings {
  /** When housekeeping ticks (a cron expression in a time zone, or an interval). */
  timing: ScheduleTiming;
  /** Whether a thread retention policy is configured. */
  threads: boolean;
  /** Ages in ms of what each pruning task removes; null: that task is off. */
  ages: Record<Exclude<HousekeepingTaskKind, 'threads'>, number | null>;
}

export interface HousekeepingDecision {
  /** The tick to run now, with its tasks; none when nothing is due. */
  tick?: { at: string; tasks: HousekeepingTask[] } | undefined;
  /** Ticks missed (downtime) that are folded into this one: housekeeping catches up once, not per tick. */
  missed: number;
  /** The new cursor: every tick at or before it is decided. */
  decidedThrough: string;
  /** When housekeeping is next due (after `decidedThrough`), or null if never. */
  nextDueAt: string | null;
}

/** Where an interval's ticks are counted from: fixed, so every orchestrator counts the same ticks. */
const EPOCH = new Date(0);

/**
 * Which housekeeping tick is due at `now`, given the cursor (every tick at or before `decidedThrough`
 * is done). Pure. After downtime only the latest missed tick runs: each task prunes by age, so one pass
 * does what the missed ones would have. Throws InvalidTimingError for a bad cron or time zone.
 */
export function decideHousekeeping(
  settings: HousekeepingSettings,
  cursor: { decidedThrough: string; now: string },
): HousekeepingDecision {
  const clock = tickClock(settings.timing, EPOCH);
  const after = new Date(cursor.decidedThrough);
  const now = new Date(cursor.now);
  const through = new Date(Math.max(after.getTime(), now.getTime()));
  const next = clock.next(through);
  const nextDueAt = next ? next.toISOString() : null;
  if (now <= after) return { missed: 0, decidedThrough: after.toISOString(), nextDueAt };
  const due = clock.latest(2, now).filter((t) => t > after);
  const latest = due.at(-1);
  if (!latest) return { missed: 0, decidedThrough: now.toISOString(), nextDueAt };
  // How many ticks fall after the cursor (bounded count: a tiny interval after a long stop is not listed).
  let missed = 0;
  for (let t = clock.next(after); t && t < latest && missed < 10_000; t = clock.next(t)) missed++;
  const at = latest.toISOString();
  return { tick: { at, tasks: housekeepingTasks(settings, at) }, missed, decidedThrough: now.toISOString(), nextDueAt };
}

/** The tasks of a tick at `at`: each pruning task's cutoff is the tick's time minus its age. */
export function housekeepingTasks(settings: HousekeepingSettings, at: string): HousekeepingTask[] {
  const t = Date.parse(at);
  const before = (ms: number) => new Date(t - ms).toISOString();
  const tasks: HousekeepingTask[] = [];
  if (settings.threads) tasks.push({ kind: 'threads', now: at });
  const kinds = ['inbox', 'failed-messages', 'webhook-deliveries', 'schedule-ticks', 'idempotency-keys'] as const;
  for (const kind of kinds) {
    const age = settings.ages[kind];
    if (age !== null) tasks.push({ kind, before: before(age) });
  }
  return tasks;
}
