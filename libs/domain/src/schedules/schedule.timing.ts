import { Cron } from 'croner';
import type { ScheduleTiming } from './schedule';

/**
 * When a schedule ticks. Cron expressions and time zones are read by croner: a local time that a
 * daylight-saving change skips (02:30 on a spring-forward night) ticks once at the first instant after
 * the gap; one that happens twice (02:30 on a fall-back night) ticks once, at its first occurrence; a
 * day that does not exist in a year (Feb 29, the 31st) is passed over until one that does.
 */
export interface TickClock {
  /** The first tick strictly after `after`, or undefined if there is none. */
  next(after: Date): Date | undefined;
  /** The latest `n` ticks at or before `through`, oldest first. */
  latest(n: number, through: Date): Date[];
}

/** A problem with a schedule's timing, in words a caller can act on. */
export class InvalidTimingError extends Error {
  constructor(
    message: string,
    readonly field: 'expression' | 'timezone' | 'everyMs',
  ) {
    super(message);
    this.name = 'InvalidTimingError';
  }
}

export const MIN_INTERVAL_MS = 1000;

/** Throws InvalidTimingError naming what is wrong (an invalid cron field, an unknown time zone). */
export function tickClock(timing: ScheduleTiming, anchorAt: Date): TickClock {
  switch (timing.kind) {
    case 'interval':
      return intervalClock(timing.everyMs, anchorAt);
    case 'cron':
      return cronClock(timing.expression, timing.timezone, anchorAt);
    default: {
      const _exhaustive: never = timing;
      throw new InvalidTimingError(`unknown timing ${JSON.stringify(_exhaustive)}`, 'expression');
    }
  }
}

function intervalClock(everyMs: number, anchorAt: Date): TickClock {
  if (!Number.isInteger(everyMs) || everyMs < MIN_INTERVAL_MS)
    throw new InvalidTimingError(`everyMs must be a whole number of at least ${MIN_INTERVAL_MS}`, 'everyMs');
  const anchor = anchorAt.getTime();
  // Tick k (k ≥ 1) is at anchor + k·everyMs: the first tick is one interval after the schedule starts.
  const index = (t: number) => Math.floor((t - anchor) / everyMs);
  return {
    next: (after) => new Date(anchor + Math.max(1, index(after.getTime()) + 1) * everyMs),
    latest: (n, through) => {
      const last = index(through.getTime());
      const out: Date[] = [];
      for (let k = Math.max(1, last - n + 1); k <= last; k++) out.push(new Date(anchor + k * everyMs));
      return out;
    },
  };
}

export function assertTimeZone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new InvalidTimingError(
      `unknown time zone "${timezone}" (use an IANA name such as Europe/Berlin)`,
      'timezone',
    );
  }
}

function cronClock(expression: string, timezone: string, anchorAt: Date): TickClock {
  assertTimeZone(timezone);
  let cron: Cron;
  try {
    cron = new Cron(expression, { timezone, paused: true });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new InvalidTimingError(`invalid cron expression "${expression}": ${why}`, 'expression');
  }
  const anchor = anchorAt.getTime();
  return {
    next: (after) => {
      const from = new Date(Math.max(after.getTime(), anchor - 1));
      return cron.nextRun(from) ?? undefined;
    },
    latest: (n, through) => {
      if (n <= 0) return [];
      // previousRuns looks strictly before its reference: one millisecond on includes `through` itself.
      return cron
        .previousRuns(n, new Date(through.getTime() + 1))
        .filter((d) => d.getTime() >= anchor)
        .reverse();
    },
  };
}
