/** How a webhook delivery goes on after an attempt (docs/webhooks.md). */
export interface WebhookRetryPolicy {
  /** Attempts in all, the first included; after the last failed one the delivery is dead. */
  maxAttempts: number;
  /** The delay before the second attempt; each later one doubles it, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export type AttemptResult =
  | { kind: 'delivered'; status: number }
  /** The receiver failed (non-2xx), timed out or could not be reached: worth another attempt. */
  | { kind: 'failed'; error: string; status?: number | undefined }
  /** It can never succeed (a forbidden address): dead at once. */
  | { kind: 'refused'; error: string };

export type AfterAttempt =
  | { status: 'delivered' }
  | { status: 'pending'; nextAttemptAt: string; error: string }
  | { status: 'dead'; error: string };

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = { maxAttempts: 8, baseDelayMs: 1000, maxDelayMs: 300_000 };

/**
 * What follows attempt number `attempt` (1-based): delivered, another attempt after an exponential
 * backoff with jitter (`random` in [0, 1): the delay is between half and all of the backoff, so
 * receivers that failed together are not all retried at once), or dead once the attempts are spent.
 */
export function afterAttempt(
  attempt: number,
  result: AttemptResult,
  policy: WebhookRetryPolicy,
  now: Date,
  random: number,
): AfterAttempt {
  switch (result.kind) {
    case 'delivered':
      return { status: 'delivered' };
    case 'refused':
      return { status: 'dead', error: result.error };
    case 'failed': {
      if (attempt >= policy.maxAttempts)
        return { status: 'dead', error: `${result.error} (after ${attempt} attempts)` };
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const delay = Math.round(backoff * (0.5 + 0.5 * Math.min(Math.max(random, 0), 1)));
      return { status: 'pending', nextAttemptAt: new Date(now.getTime() + delay).toISOString(), error: result.error };
    }
    default: {
      const _exhaustive: never = result;
      return _exhaustive;
    }
  }
}
