/**
 * A tenant's schedule: when it ticks, what each tick asks for, and what happens when ticks meet a run
 * still going (overlap) or were missed while nothing ran (catch-up). Plain data; the rules are in
 * `schedule.decider.ts`.
 */
export type ScheduleTiming =
  /** A cron expression (5 fields, or 6 with seconds first) read in an IANA time zone. */
  | { kind: 'cron'; expression: string; timezone: string }
  /** Every `everyMs`, counted from the schedule's anchor (when it was created). */
  | { kind: 'interval'; everyMs: number };

/** `new`: each tick's run gets a thread of its own; `shared`: every tick's run goes to one thread. */
export type ThreadPolicy = 'new' | 'shared';

/**
 * When a tick comes while the run of the previous tick is still going:
 * `skip` starts nothing; `enqueue` starts a run that waits for it (shared thread only);
 * `cancel-previous` cancels it and starts the new one.
 */
export type OverlapPolicy = 'skip' | 'enqueue' | 'cancel-previous';

/**
 * Ticks more than the grace late (the service was down, or the clock jumped): `skip` starts none of
 * them, `once` starts one run for all of them (the latest), `all` starts each of the latest `max`.
 */
export type CatchUpPolicy = { kind: 'skip' } | { kind: 'once' } | { kind: 'all'; max: number };

export interface Schedule {
  id: string;
  tenantId: string;
  timing: ScheduleTiming;
  agent: string;
  input: string;
  thread: ThreadPolicy;
  overlap: OverlapPolicy;
  catchUp: CatchUpPolicy;
  paused: boolean;
  /** Ticks are counted from here (interval), and none comes before it. */
  anchorAt: string;
  /** No tick after this instant. */
  endAt?: string | undefined;
  /** On whose behalf each tick's run acts: who created the schedule. */
  principal: { id: string; roles: string[] };
  /** Where each tick's run posts its outcome when it ends. */
  webhookUrl?: string | undefined;
}

/** The bound of `catchUp: all`. */
export const MAX_CATCH_UP = 1000;
