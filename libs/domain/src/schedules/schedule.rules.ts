import type { Schedule } from './schedule';
import { MAX_CATCH_UP } from './schedule';
import { InvalidTimingError, tickClock } from './schedule.timing';

/** What is wrong with a schedule, each problem naming its field; empty when it is valid. */
export function scheduleProblems(schedule: Schedule): string[] {
  const problems: string[] = [];
  try {
    tickClock(schedule.timing, new Date(schedule.anchorAt));
  } catch (error) {
    if (!(error instanceof InvalidTimingError)) throw error;
    problems.push(`${error.field === 'everyMs' ? 'interval.everyMs' : `cron.${error.field}`}: ${error.message}`);
  }
  if (schedule.overlap === 'enqueue' && schedule.thread !== 'shared')
    problems.push('overlap: "enqueue" needs thread "shared" (only runs of one thread wait for each other)');
  if (schedule.catchUp.kind === 'all' && !(schedule.catchUp.max >= 1 && schedule.catchUp.max <= MAX_CATCH_UP))
    problems.push(`catchUp.max: must be between 1 and ${MAX_CATCH_UP}`);
  if (schedule.endAt !== undefined && Date.parse(schedule.endAt) <= Date.parse(schedule.anchorAt))
    problems.push('endAt: must be in the future');
  return problems;
}
