import {
  admit,
  deferDelayMs,
  drainHeld,
  fairShareLimits,
  finished,
  heldCount,
  hold,
  initialFairShares,
  mayDefer,
  nextToRun,
  started,
  type FairShareState,
} from './fair-shares';

const first = { deliveryCount: 1, maxDeliver: 20 };

/** Given: `running` handlers per key started, `waiting` messages per key held. */
function given(
  limits: { max: number; perKey: number; held: number },
  running: Record<string, number> = {},
  waiting: Record<string, string[]> = {},
): FairShareState<string> {
  const s = initialFairShares<string>(fairShareLimits(limits.max, limits.perKey, limits.held));
  for (const [key, n] of Object.entries(running)) for (let i = 0; i < n; i++) started(s, key);
  for (const [key, items] of Object.entries(waiting)) for (const item of items) hold(s, key, item);
  return s;
}

describe('fair shares of a consumer between tenants', () => {
  it('runs a message of a key below its bound while slots are free', () => {
    expect(admit(given({ max: 4, perKey: 2, held: 2 }, { a: 1 }), 'a', first)).toBe('run');
  });

  it('holds a message of a key at its bound, while another key still runs at once', () => {
    const s = given({ max: 4, perKey: 2, held: 2 }, { b: 2 });
    expect(admit(s, 'b', first)).toBe('hold');
    expect(admit(s, 'a', first)).toBe('run');
  });

  it('holds when every slot is taken, whatever the key', () => {
    expect(admit(given({ max: 4, perKey: 2, held: 2 }, { b: 2, c: 2 }), 'a', first)).toBe('hold');
  });

  it('keeps a key in arrival order: nothing new runs ahead of its waiting messages', () => {
    const s = given({ max: 4, perKey: 2, held: 2 }, { b: 1 }, { b: ['b1'] });
    expect(admit(s, 'b', first)).toBe('hold');
  });

  it('defers a message of a key whose line is full', () => {
    expect(admit(given({ max: 4, perKey: 2, held: 2 }, { b: 2 }, { b: ['b1', 'b2'] }), 'b', first)).toBe('defer');
  });

  it('holds instead of deferring a message that used half its deliveries', () => {
    const s = given({ max: 4, perKey: 2, held: 2 }, { b: 2 }, { b: ['b1', 'b2'] });
    expect(admit(s, 'b', { deliveryCount: 10, maxDeliver: 20 })).toBe('hold');
    expect(admit(s, 'b', { deliveryCount: 9, maxDeliver: 20 })).toBe('defer');
    expect(mayDefer(100, -1)).toBe(true);
  });

  it('serves waiting lines in turn when slots free', () => {
    const s = given({ max: 2, perKey: 2, held: 8 }, { b: 2 }, { b: ['b1', 'b2', 'b3'], a: ['a1', 'a2'] });
    finished(s, 'b');
    const one = nextToRun(s)!;
    started(s, one.key);
    finished(s, 'b');
    const two = nextToRun(s)!;
    started(s, two.key);
    expect([one.item, two.item].sort()).toEqual(['a1', 'b1']);
    finished(s, one.key);
    finished(s, two.key);
    const order: string[] = [];
    for (let next = nextToRun(s); next; next = nextToRun(s)) {
      order.push(next.item);
      started(s, next.key);
      finished(s, next.key);
    }
    expect(order).toEqual(expect.arrayContaining(['a2', 'b2', 'b3']));
    expect(order.indexOf('a2')).toBeLessThan(order.indexOf('b3'));
    expect(heldCount(s)).toBe(0);
  });

  it('passes over a line whose key is at its bound', () => {
    const s = given({ max: 4, perKey: 2, held: 8 }, { b: 2 }, { b: ['b1'], a: ['a1'] });
    expect(nextToRun(s)).toEqual({ key: 'a', item: 'a1' });
    expect(nextToRun(s)).toBeUndefined();
  });

  it('runs nothing from the lines while every slot is taken', () => {
    expect(nextToRun(given({ max: 2, perKey: 1, held: 8 }, { b: 1, c: 1 }, { a: ['a1'] }))).toBeUndefined();
  });

  it('drains every waiting message on stop', () => {
    const s = given({ max: 2, perKey: 1, held: 8 }, {}, { a: ['a1'], b: ['b1', 'b2'] });
    expect(drainHeld(s).sort()).toEqual(['a1', 'b1', 'b2']);
    expect(heldCount(s)).toBe(0);
  });

  it('derives bounds from the concurrency: half of it per key, four times that waiting', () => {
    expect(fairShareLimits(64)).toEqual({ maxInFlight: 64, perKeyInFlight: 32, perKeyHeld: 128 });
    expect(fairShareLimits(1)).toEqual({ maxInFlight: 1, perKeyInFlight: 1, perKeyHeld: 4 });
    expect(fairShareLimits(8, 100, 0)).toEqual({ maxInFlight: 8, perKeyInFlight: 8, perKeyHeld: 1 });
  });

  it('defers for longer each time, up to 10 s', () => {
    expect([0, 1, 2, 5, 30].map(deferDelayMs)).toEqual([500, 1000, 2000, 10_000, 10_000]);
  });
});
