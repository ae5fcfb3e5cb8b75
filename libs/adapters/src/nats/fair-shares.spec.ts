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
  limits: { max: number; perKey: number; held: number; total?: number },
  running: Record<string, number> = {},
  waiting: Record<string, string[]> = {},
): FairShareState<string> {
  const s = initialFairShares<string>(
    fairShareLimits(limits.max, limits.perKey, { perKey: limits.held, total: limits.total ?? 100 }),
  );
  for (const [key, n] of Object.entries(running)) for (let i = 0; i < n; i++) started(s, key);
  for (const [key, items] of Object.entries(waiting)) for (const item of items) hold(s, key, item);
  return s;
}

describe('fair shares of a consumer between tenants', () => {
  it('runs a message of a key below its bound while slots are free', () => {
    expect(admit(given({ max: 4, perKey: 2, held: 2 }, { a: 1 }), 'a', first)).toBe('run');
  });

  it('lets a key alone use every free slot, beyond its share', () => {
    expect(admit(given({ max: 4, perKey: 2, held: 2 }, { b: 3 }), 'b', first)).toBe('run');
  });

  it('holds a message of a key over its share while another key waits, and that key runs at once', () => {
    const s = given({ max: 4, perKey: 2, held: 2 }, { b: 2, c: 1 }, { c: ['c1'] });
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
    expect(admit(given({ max: 2, perKey: 1, held: 2 }, { b: 2 }, { b: ['b1', 'b2'] }), 'b', first)).toBe('defer');
  });

  it('defers when all lines together are full, but gives a key without a line its first place', () => {
    const s = given({ max: 2, perKey: 1, held: 4, total: 3 }, { b: 1, c: 1 }, { b: ['b1', 'b2'], c: ['c1'] });
    expect(admit(s, 'b', first)).toBe('defer');
    expect(admit(s, 'c', first)).toBe('defer');
    expect(admit(s, 'a', first)).toBe('hold');
  });

  it('holds instead of deferring a message that used half its deliveries', () => {
    const s = given({ max: 2, perKey: 1, held: 2 }, { b: 2 }, { b: ['b1', 'b2'] });
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

  it('passes over a line whose key is at its share while another waits, and serves it in turn below it', () => {
    const s = given({ max: 4, perKey: 2, held: 8 }, { b: 2 }, { b: ['b1', 'b2'], a: ['a1', 'a2', 'a3'] });
    expect(nextToRun(s)).toEqual({ key: 'a', item: 'a1' });
    started(s, 'a');
    expect(nextToRun(s)).toEqual({ key: 'a', item: 'a2' });
    started(s, 'a');
    expect(nextToRun(s)).toBeUndefined(); // every slot taken
    finished(s, 'a');
    finished(s, 'b');
    expect(nextToRun(s)).toEqual({ key: 'b', item: 'b1' }); // b is below its share again: its turn
    started(s, 'b');
    expect(nextToRun(s)).toEqual({ key: 'a', item: 'a3' });
    started(s, 'a');
    finished(s, 'a');
    finished(s, 'a');
    finished(s, 'b');
    finished(s, 'b');
    expect(nextToRun(s)).toEqual({ key: 'b', item: 'b2' }); // alone now
  });

  it('runs nothing from the lines while every slot is taken', () => {
    expect(nextToRun(given({ max: 2, perKey: 1, held: 8 }, { b: 1, c: 1 }, { a: ['a1'] }))).toBeUndefined();
  });

  it('drains every waiting message on stop', () => {
    const s = given({ max: 2, perKey: 1, held: 8 }, {}, { a: ['a1'], b: ['b1', 'b2'] });
    expect(drainHeld(s).sort()).toEqual(['a1', 'b1', 'b2']);
    expect(heldCount(s)).toBe(0);
  });

  it('derives bounds from the concurrency: half of it per key, lines of four times that', () => {
    expect(fairShareLimits(64)).toEqual({ maxInFlight: 64, perKeyInFlight: 32, perKeyHeld: 128, maxHeld: 256 });
    expect(fairShareLimits(1)).toEqual({ maxInFlight: 1, perKeyInFlight: 1, perKeyHeld: 64, maxHeld: 256 });
    expect(fairShareLimits(8, 100, { perKey: 0, total: 0 })).toEqual({
      maxInFlight: 8,
      perKeyInFlight: 8,
      perKeyHeld: 1,
      maxHeld: 1,
    });
  });

  it("defers for about as long as the key's line takes to drain at its slots, longer each time, within 100 ms and 10 s", () => {
    const s = given({ max: 4, perKey: 2, held: 100 }, { b: 2 }, { b: Array.from({ length: 98 }, (_, i) => `b${i}`) });
    expect(deferDelayMs(s, 'b', 0, 10)).toBe(500);
    expect(deferDelayMs(s, 'b', 1, 10)).toBe(750);
    expect(deferDelayMs(s, 'b', 12, 10)).toBe(10_000);
    expect(deferDelayMs(s, 'b', 0, 0.01)).toBe(100);
  });
});
