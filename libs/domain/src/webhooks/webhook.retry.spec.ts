import { afterAttempt, type WebhookRetryPolicy } from './webhook.retry';

const policy: WebhookRetryPolicy = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 3000 };
const now = new Date('2027-01-01T00:00:00.000Z');
const failed = { kind: 'failed' as const, error: 'HTTP 503', status: 503 };
const delay = (d: ReturnType<typeof afterAttempt>) =>
  d.status === 'pending' ? Date.parse(d.nextAttemptAt) - now.getTime() : undefined;

describe('webhook retries', () => {
  it('a 2xx answer delivers', () => {
    expect(afterAttempt(1, { kind: 'delivered', status: 204 }, policy, now, 0.3)).toEqual({ status: 'delivered' });
  });

  it('a failure is retried after an exponential backoff, capped', () => {
    expect([1, 2, 3].map((a) => delay(afterAttempt(a, failed, policy, now, 0.999999)))).toEqual([1000, 2000, 3000]);
  });

  it('jitter spreads each delay between half and all of the backoff', () => {
    expect(delay(afterAttempt(2, failed, policy, now, 0))).toBe(1000);
    expect(delay(afterAttempt(2, failed, policy, now, 0.5))).toBe(1500);
  });

  it('after the last attempt the delivery is dead, saying why and after how many', () => {
    expect(afterAttempt(4, failed, policy, now, 0.5)).toEqual({ status: 'dead', error: 'HTTP 503 (after 4 attempts)' });
  });

  it('a refused address is dead at once', () => {
    expect(afterAttempt(1, { kind: 'refused', error: 'loopback' }, policy, now, 0.5)).toEqual({
      status: 'dead',
      error: 'loopback',
    });
  });
});
