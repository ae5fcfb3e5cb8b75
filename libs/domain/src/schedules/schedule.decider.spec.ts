import { runIdFor, threadIdFor } from '@ratchet/contracts';
import type { Schedule } from './schedule';
import { decideTicks, scheduleThreadId, tickRequestId, type TickContext } from './schedule.decider';
import { scheduleProblems } from './schedule.rules';
import { tickClock } from './schedule.timing';

const anchor = '2027-01-01T00:00:00.000Z';

function schedule(overrides: Partial<Schedule> = {}): Schedule {
  return {
    id: 'sch_1',
    tenantId: 'acme',
    timing: { kind: 'interval', everyMs: 2000 },
    agent: 'triage',
    input: 'triage the queue',
    thread: 'new',
    overlap: 'skip',
    catchUp: { kind: 'skip' },
    paused: false,
    anchorAt: anchor,
    principal: { id: 'alice', roles: ['admin'] },
    ...overrides,
  };
}

const at = (seconds: number) => new Date(Date.parse(anchor) + seconds * 1000).toISOString();

/** given a schedule and what was decided before, when the ticker looks at `now`, then … */
function when(s: Schedule, ctx: Partial<TickContext> & { now: string }) {
  return decideTicks(s, { decidedThrough: anchor, graceMs: 60_000, ...ctx });
}

const started = (d: ReturnType<typeof decideTicks>) => d.ticks.filter((t) => t.action === 'start').map((t) => t.at);

describe('schedule ticks: on time', () => {
  it('nothing is due before the first tick, and the next due time is the first tick', () => {
    const d = when(schedule(), { now: at(1.5) });
    expect(d.ticks).toEqual([]);
    expect(d.nextDueAt).toBe(at(2));
    expect(d.decidedThrough).toBe(at(1.5));
  });

  it('a due tick starts one run whose requestId is derived from (schedule, tick)', () => {
    const d = when(schedule(), { now: at(2.3) });
    expect(d.ticks).toEqual([
      {
        at: at(2),
        action: 'start',
        request: {
          requestId: `schedule:sch_1:${at(2)}`,
          agent: 'triage',
          input: [{ role: 'user', content: 'triage the queue' }],
          principal: { id: 'alice', roles: ['admin'] },
          metadata: { scheduleId: 'sch_1', tickAt: at(2) },
          concurrency: 'enqueue',
        },
      },
    ]);
    expect(d.nextDueAt).toBe(at(4));
  });

  it('deciding the same tick again (another orchestrator, a restart) asks for the same run', () => {
    const a = when(schedule(), { now: at(2.3) });
    const b = when(schedule(), { now: at(3.9) });
    expect(started(a)).toEqual(started(b));
    expect(a.ticks[0]).toEqual(b.ticks[0]);
  });

  it('ticks at or before the cursor are never decided again', () => {
    const d = when(schedule(), { decidedThrough: at(2.3), now: at(4.1) });
    expect(started(d)).toEqual([at(4)]);
  });

  it('a shared thread sends every tick to the schedule’s one thread', () => {
    const d = when(schedule({ thread: 'shared' }), { now: at(2) });
    const tick = d.ticks[0];
    expect(tick?.action === 'start' && tick.request.threadId).toBe(scheduleThreadId('acme', 'sch_1'));
  });

  it('a schedule with a webhook names it on every run request', () => {
    const d = when(schedule({ webhookUrl: 'https://hooks.example.com/r' }), { now: at(2) });
    const tick = d.ticks[0];
    expect(tick?.action === 'start' && tick.request.webhookUrl).toBe('https://hooks.example.com/r');
  });
});

describe('schedule ticks: paused and ended', () => {
  it('a paused schedule decides nothing and is not due', () => {
    const d = when(schedule({ paused: true }), { now: at(10) });
    expect(d.ticks).toEqual([]);
    expect(d.nextDueAt).toBeNull();
  });

  it('no tick after the end date; past it the schedule is never due again', () => {
    const d = when(schedule({ endAt: at(5), overlap: 'cancel-previous' }), { now: at(9) });
    expect(started(d)).toEqual([at(2), at(4)]);
    expect(d.nextDueAt).toBeNull();
  });
});

describe('schedule ticks: catch-up after downtime', () => {
  // Down from 0 s to 600 s: ticks at 2…540 s are more than the 60 s grace late; 542…600 s are on time.
  const now = at(600.5);

  it('skip: missed ticks start nothing, on-time ones start', () => {
    const d = when(schedule({ overlap: 'enqueue', thread: 'shared' }), { now });
    expect(started(d)).toHaveLength(30);
    expect(started(d)[0]).toBe(at(542));
    expect(d.missedSkipped).toBeGreaterThan(0);
  });

  it('once: one run for all the missed ticks (the latest), then the on-time ones', () => {
    const d = when(schedule({ catchUp: { kind: 'once' }, overlap: 'enqueue', thread: 'shared' }), { now });
    expect(started(d)).toHaveLength(31);
    expect(started(d)[0]).toBe(at(540));
  });

  it('all up to a bound: the latest `max` missed ticks start, in order', () => {
    const d = when(schedule({ catchUp: { kind: 'all', max: 3 }, overlap: 'enqueue', thread: 'shared' }), { now });
    expect(started(d).slice(0, 4)).toEqual([at(536), at(538), at(540), at(542)]);
    expect(started(d)).toHaveLength(33);
  });

  it('a clock stepped forward is downtime like any other', () => {
    const before = when(schedule({ catchUp: { kind: 'once' } }), { now: at(2.1) });
    const d = when(schedule({ catchUp: { kind: 'once' } }), { decidedThrough: before.decidedThrough, now: at(3600) });
    // one run for the missed lot; the on-time ticks overlap it and are skipped (overlap: skip).
    expect(started(d)).toEqual([at(3540)]);
    expect(d.ticks.filter((t) => t.action === 'skip')).toHaveLength(30);
  });
});

describe('schedule ticks: overlap with the previous run', () => {
  const activeRun = { runId: 'run_prev', threadId: 'th_prev' };

  it('skip: a tick while the previous run goes on starts nothing', () => {
    const d = when(schedule({ overlap: 'skip' }), { now: at(2), activeRun });
    expect(d.ticks).toEqual([{ at: at(2), action: 'skip', reason: 'overlap' }]);
  });

  it('skip: ticks decided together overlap the run the first of them starts', () => {
    const d = when(schedule({ overlap: 'skip' }), { now: at(6) });
    expect(d.ticks.map((t) => t.action)).toEqual(['start', 'skip', 'skip']);
  });

  it('enqueue: the run waits for the previous one on the shared thread', () => {
    const d = when(schedule({ overlap: 'enqueue', thread: 'shared' }), { now: at(2), activeRun });
    const tick = d.ticks[0];
    expect(tick?.action === 'start' && tick.request.concurrency).toBe('enqueue');
  });

  it('cancel-previous on a shared thread interrupts the active run', () => {
    const d = when(schedule({ overlap: 'cancel-previous', thread: 'shared' }), { now: at(2), activeRun });
    const tick = d.ticks[0];
    expect(tick?.action === 'start' && tick.request.concurrency).toBe('interrupt');
    expect(tick?.action === 'start' && tick.cancel).toBeUndefined();
  });

  it('cancel-previous with a thread per tick cancels the previous run, then starts', () => {
    const d = when(schedule({ overlap: 'cancel-previous' }), { now: at(4), activeRun });
    expect(d.ticks.map((t) => (t.action === 'start' ? t.cancel : undefined))).toEqual([
      activeRun,
      {
        runId: runIdFor('acme', tickRequestId('sch_1', at(2))),
        threadId: threadIdFor('acme', tickRequestId('sch_1', at(2))),
      },
    ]);
  });
});

describe('cron schedules in a time zone', () => {
  const berlin = (expression: string) =>
    schedule({ timing: { kind: 'cron', expression, timezone: 'Europe/Berlin' }, anchorAt: '2027-03-01T00:00:00.000Z' });

  it('a daily 09:00 follows local time across the spring-forward change', () => {
    const clock = tickClock(berlin('0 9 * * *').timing, new Date('2027-03-01T00:00:00Z'));
    // 2027-03-28: CET (UTC+1) → CEST (UTC+2)
    expect(clock.next(new Date('2027-03-27T00:00:00Z'))?.toISOString()).toBe('2027-03-27T08:00:00.000Z');
    expect(clock.next(new Date('2027-03-27T08:00:00Z'))?.toISOString()).toBe('2027-03-28T07:00:00.000Z');
  });

  it('a local time the spring-forward gap skips (02:30) ticks once, at the end of the gap', () => {
    const clock = tickClock(berlin('30 2 * * *').timing, new Date('2027-03-01T00:00:00Z'));
    expect(clock.next(new Date('2027-03-27T12:00:00Z'))?.toISOString()).toBe('2027-03-28T01:00:00.000Z');
    expect(clock.next(new Date('2027-03-28T01:00:00Z'))?.toISOString()).toBe('2027-03-29T00:30:00.000Z');
  });

  it('a local time the fall-back change repeats (02:30) ticks once, at its first occurrence', () => {
    const clock = tickClock(berlin('30 2 * * *').timing, new Date('2027-03-01T00:00:00Z'));
    // 2027-10-31: 02:30 CEST (00:30Z) and 02:30 CET (01:30Z)
    expect(clock.next(new Date('2027-10-30T12:00:00Z'))?.toISOString()).toBe('2027-10-31T00:30:00.000Z');
    expect(clock.next(new Date('2027-10-31T00:30:00Z'))?.toISOString()).toBe('2027-11-01T01:30:00.000Z');
  });

  it('Feb 29 ticks only in leap years', () => {
    const clock = tickClock(
      { kind: 'cron', expression: '0 12 29 2 *', timezone: 'UTC' },
      new Date('2027-01-01T00:00:00Z'),
    );
    expect(clock.next(new Date('2027-01-01T00:00:00Z'))?.toISOString()).toBe('2028-02-29T12:00:00.000Z');
    expect(clock.next(new Date('2028-02-29T12:00:00Z'))?.toISOString()).toBe('2032-02-29T12:00:00.000Z');
  });

  it('the 31st is passed over in months without one', () => {
    const clock = tickClock(
      { kind: 'cron', expression: '0 0 31 * *', timezone: 'UTC' },
      new Date('2027-01-01T00:00:00Z'),
    );
    expect(clock.next(new Date('2027-01-31T00:00:00Z'))?.toISOString()).toBe('2027-03-31T00:00:00.000Z');
    expect(clock.next(new Date('2027-03-31T00:00:00Z'))?.toISOString()).toBe('2027-05-31T00:00:00.000Z');
  });

  it('a cron tick before the schedule existed is never due', () => {
    const s = schedule({ timing: { kind: 'cron', expression: '* * * * * *', timezone: 'UTC' }, anchorAt: at(10) });
    const d = decideTicks(s, { decidedThrough: at(0), now: at(12.5), graceMs: 60_000 });
    expect(d.ticks.map((t) => t.at)).toEqual([at(10), at(11), at(12)]);
  });
});

describe('schedule validation names the problem', () => {
  it.each([
    [
      { timing: { kind: 'cron', expression: '61 * * * *', timezone: 'UTC' } },
      /cron\.expression: invalid cron expression "61 \* \* \* \*"/,
    ],
    [
      { timing: { kind: 'cron', expression: '0 9 * * *', timezone: 'Mars/Olympus' } },
      /cron\.timezone: unknown time zone "Mars\/Olympus"/,
    ],
    [
      { timing: { kind: 'interval', everyMs: 10 } },
      /interval\.everyMs: everyMs must be a whole number of at least 1000/,
    ],
    [{ overlap: 'enqueue', thread: 'new' }, /overlap: "enqueue" needs thread "shared"/],
    [{ catchUp: { kind: 'all', max: 0 } }, /catchUp\.max/],
    [{ endAt: anchor }, /endAt/],
  ] as [Partial<Schedule>, RegExp][])('%j', (overrides, problem) => {
    expect(scheduleProblems(schedule(overrides)).join('\n')).toMatch(problem);
  });

  it('a valid schedule has no problems', () => {
    expect(
      scheduleProblems(schedule({ timing: { kind: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Berlin' } })),
    ).toEqual([]);
  });
});
