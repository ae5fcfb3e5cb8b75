import { RateLimiter } from './rate-limiter';

describe('RateLimiter', () => {
  it('allows a burst of perMinute, then refuses with the seconds until the next token', () => {
    let now = 0;
    const limiter = new RateLimiter(3, () => now);
    expect([1, 2, 3].map(() => limiter.take('a').ok)).toEqual([true, true, true]);
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterSeconds: 20 });
    now += 20_000;
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false);
  });

  it('counts each credential on its own, and 0 means no limit', () => {
    const limiter = new RateLimiter(1, () => 0);
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('b').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false);
    const off = new RateLimiter(0, () => 0);
    expect(Array.from({ length: 100 }, () => off.take('a').ok).every(Boolean)).toBe(true);
  });

  it('forgets the least recently used credentials beyond its bound (they start full again)', () => {
    const limiter = new RateLimiter(1, () => 0, 2);
    limiter.take('a');
    limiter.take('b');
    limiter.take('c');
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('c').ok).toBe(false);
  });
});
