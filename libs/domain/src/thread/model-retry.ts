/**
 * How model calls are retried: pure, so a replay decides the same. The time of a retry comes from the
 * decision's clock (`at` on the command) and its jitter from the failed command's id.
 */

import type { RunLimits } from '@ratchet/contracts';

/** Attempts per model call of a step when the run's limits name none. */
export const DEFAULT_MODEL_ATTEMPTS = 3;

/** The attempts a model call of a run with these limits may take. */
export function modelAttemptsOf(run: { limits?: RunLimits | undefined }): number {
  return run.limits?.modelAttempts ?? DEFAULT_MODEL_ATTEMPTS;
}

/** First backoff before a retry; it doubles per attempt. */
const BASE_DELAY_MS = 1_000;
/** Cap of the exponential backoff. */
const MAX_BACKOFF_MS = 60_000;
/** Cap of a wait the provider asks for (Retry-After): longer than this, the attempt waits this long. */
const MAX_RETRY_AFTER_MS = 300_000;

/**
 * The wait before the attempt after `failedAttempt` (1 for the first): exponential backoff from 1 s,
 * capped at 60 s, with "equal jitter" (between half and all of it) so runs that failed together do not
 * come back together; at least the provider's Retry-After when it gave one (capped at 5 minutes).
 */
export function modelRetryDelayMs(failedAttempt: number, retryAfterMs: number | undefined, seed: string): number {
  const exponential = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** Math.max(0, failedAttempt - 1));
  const jittered = Math.round(exponential / 2 + (unitHash(seed) * exponential) / 2);
  if (retryAfterMs === undefined) return jittered;
  const asked = Math.min(MAX_RETRY_AFTER_MS, retryAfterMs);
  // A little jitter on top of what was asked too: a crowd told "60 s" must not return in the same millisecond.
  return Math.max(jittered, Math.round(asked * (1 + 0.1 * unitHash(`${seed}:after`))));
}

/** `at` plus `ms`, as an ISO time. */
export function later(at: string, ms: number): string {
  return new Date(Date.parse(at) + ms).toISOString();
}

/** A number in [0, 1) drawn from `seed` (FNV-1a): the same seed, the same number. */
function unitHash(seed: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) {
    h ^= seed.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 0x1_0000_0000;
}
