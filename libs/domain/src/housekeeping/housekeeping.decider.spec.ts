import { InvalidTimingError } from '../schedules/schedule.timing';
import { decideHousekeeping, housekeepingTasks, type HousekeepingSettings } from './housekeeping.decider';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function settings(overrides: Partial<HousekeepingSettings> = {}): HousekeepingSettings {
  return {
    timing: { kind: 'cron', expression: '17 3 * * *', timezone: 'UTC' },
    threads: true,
    ages: {
      inbox: 7 * DAY,
      'failed-messages': 30 * DAY,
      'webhook-deliveries': 30 * DAY,
      'schedule-ticks': 30 * DAY,
      'idempotency-keys': 7 * DAY,
    },
    ...overrides,
  };
}

/** given the cursor at `decidedThrough`, when an orchestrator looks at `now`, then … */
const when = (s: HousekeepingSettings, decidedThrough: string, now: string) =>
  decideHousekeeping(s, { decidedThrough, now });

describe('housekeeping ticks', () => {
  it('nothing is due before the nightly tick; the cursor moves to now and the next tick is named', () => {
    const d = when(settings(), '2027-03-01T00:00:00.000Z', '2027-03-01T03:00:00.000Z');
    expect(d.tick).toBeUndefined();
    expect(d.decidedThrough).toBe('2027-03-01T03:00:00.000Z');
    expect(d.nextDueAt).toBe('2027-03-01T03:17:00.000Z');
  });

  it('the tick is due once its time has passed, with every task and its cutoff from the tick time', () => {
    const d = when(settings(), '2027-03-01T03:00:00.000Z', '2027-03-01T03:17:00.500Z');
    expect(d.tick).toEqual({
      at: '2027-03-01T03:17:00.000Z',
      tasks: [
        { kind: 'threads', now: '2027-03-01T03:17:00.000Z' },
        { kind: 'inbox', before: '2027-02-22T03:17:00.000Z' },
        { kind: 'failed-messages', before: '2027-01-30T03:17:00.000Z' },
        { kind: 'webhook-deliveries', before: '2027-01-30T03:17:00.000Z' },
        { kind: 'schedule-ticks', before: '2027-01-30T03:17:00.000Z' },
        { kind: 'idempotency-keys', before: '2027-02-22T03:17:00.000Z' },
      ],
    });
    expect(d.missed).toBe(0);
    expect(d.decidedThrough).toBe('2027-03-01T03:17:00.500Z');
    expect(d.nextDueAt).toBe('2027-03-02T03:17:00.000Z');
  });

  it('a tick decided is not due again: the same cursor and a later look find nothing', () => {
    const first = when(settings(), '2027-03-01T03:00:00.000Z', '2027-03-01T03:17:01.000Z');
    const again = when(settings(), first.decidedThrough, '2027-03-01T03:17:05.000Z');
    expect(again.tick).toBeUndefined();
  });

  it('after downtime only the latest missed tick runs (pruning by age catches up in one pass)', () => {
    const d = when(settings(), '2027-03-01T00:00:00.000Z', '2027-03-04T12:00:00.000Z');
    expect(d.tick?.at).toBe('2027-03-04T03:17:00.000Z');
    expect(d.missed).toBe(3);
    expect(d.nextDueAt).toBe('2027-03-05T03:17:00.000Z');
  });

  it('a clock behind the cursor decides nothing and keeps the cursor', () => {
    const d = when(settings(), '2027-03-02T00:00:00.000Z', '2027-03-01T23:00:00.000Z');
    expect(d).toEqual({ missed: 0, decidedThrough: '2027-03-02T00:00:00.000Z', nextDueAt: '2027-03-02T03:17:00.000Z' });
  });

  it('reads the cron in its time zone (03:17 in Berlin is 02:17 UTC in winter)', () => {
    const s = settings({ timing: { kind: 'cron', expression: '17 3 * * *', timezone: 'Europe/Berlin' } });
    expect(when(s, '2027-01-10T00:00:00.000Z', '2027-01-10T02:20:00.000Z').tick?.at).toBe('2027-01-10T02:17:00.000Z');
  });

  it('tasks that are off are left out; no retention policy, no thread task', () => {
    const s = settings({
      threads: false,
      ages: {
        inbox: HOUR,
        'failed-messages': null,
        'webhook-deliveries': null,
        'schedule-ticks': DAY,
        'idempotency-keys': null,
      },
    });
    expect(housekeepingTasks(s, '2027-03-01T03:17:00.000Z')).toEqual([
      { kind: 'inbox', before: '2027-03-01T02:17:00.000Z' },
      { kind: 'schedule-ticks', before: '2027-02-28T03:17:00.000Z' },
    ]);
  });

  it('an invalid cron or time zone is an InvalidTimingError naming it', () => {
    const bad = (timing: HousekeepingSettings['timing']) => () =>
      when(settings({ timing }), '2027-03-01T00:00:00.000Z', '2027-03-01T04:00:00.000Z');
    expect(bad({ kind: 'cron', expression: '61 * * * *', timezone: 'UTC' })).toThrow(InvalidTimingError);
    expect(bad({ kind: 'cron', expression: '0 3 * * *', timezone: 'Mars/Olympus' })).toThrow(/unknown time zone/);
  });
});
