/**
 * A token bucket per credential, in this process's memory: `perMinute` requests in a burst, refilled
 * continuously at `perMinute / 60` per second. Each gateway replica counts on its own, so N replicas
 * behind a load balancer allow up to N × the limit.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly refillPerMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = () => Date.now(),
    private readonly maxTracked = 100_000,
  ) {
    this.refillPerMs = perMinute / 60_000;
  }

  /** Takes one token for `key`; when none is left, says how many seconds until one is. */
  take(key: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    return this.use(key, true);
  }

  /** Whether `key` has a token left, without taking it. */
  check(key: string): { ok: true } | { ok: false; retryAfterSeconds: number } {
    return this.use(key, false);
  }

  private use(key: string, consume: boolean): { ok: true } | { ok: false; retryAfterSeconds: number } {
    if (this.perMinute <= 0) return { ok: true };
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.refillPerMs);
    bucket.at = now;
    // Re-inserted so the map stays in least-recently-used order for eviction.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    this.evict();
    if (bucket.tokens >= 1) {
      if (consume) bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.refillPerMs / 1000)) };
  }

  private evict(): void {
    // A forgotten bucket starts full again: for an idle credential that is what refilling would give.
    while (this.buckets.size > this.maxTracked) {
      const oldest = this.buckets.keys().next().value;
      if (oldest === undefined) return;
      this.buckets.delete(oldest);
    }
  }
}
