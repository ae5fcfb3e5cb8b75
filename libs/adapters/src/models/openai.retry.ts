import { performance } from 'node:perf_hooks';
import { errorCodeOf, errorMessageOf } from './openai.mapping';

/**
 * What to do with a failed HTTP exchange: which failures are worth repeating inside one attempt, how
 * long to wait first, and what the error outcome says once we stop. Pure apart from `sleep`.
 */

export interface RetryPolicy {
  /** Retries after the first request (so at most maxRetries + 1 requests per model call). */
  maxRetries: number;
  /** First backoff; doubles per retry. */
  baseDelayMs: number;
  /** Cap on any single wait, including one asked for by Retry-After. */
  maxDelayMs: number;
}

/** One request/response exchange as the model client saw it. */
export type Exchange =
  | { kind: 'response'; status: number; text: string; retryAfterMs: number | undefined }
  | { kind: 'timeout' }
  | { kind: 'network'; detail: string };

export interface Classified {
  code: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number | undefined;
}

/** Status codes that may succeed if repeated: 408, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

const CLIENT_ERRORS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'request_too_large',
  422: 'unprocessable_request',
};

/** A failed exchange (any non-2xx response, a timeout, a network error) → code, message, retryable. */
export function classifyFailure(exchange: Exchange): Classified {
  switch (exchange.kind) {
    case 'timeout':
      return { code: 'timeout', message: 'the provider did not answer in time', retryable: true };
    case 'network':
      return { code: 'network', message: `network error: ${exchange.detail}`, retryable: true };
    case 'response':
      break;
  }
  const { status, text, retryAfterMs } = exchange;
  const body = tryJson(text);
  const said = providerSays(body, text);
  if (status === 429) {
    // OpenAI answers 429 for an exhausted quota too; waiting does not refill a billing account.
    if (errorCodeOf(body) === 'insufficient_quota') {
      return { code: 'quota_exceeded', message: `HTTP 429 from the provider${said}`, retryable: false };
    }
    return { code: 'rate_limited', message: `HTTP 429 from the provider${said}`, retryable: true, retryAfterMs };
  }
  if (status === 408) return { code: 'timeout', message: `HTTP 408 from the provider${said}`, retryable: true };
  if (status >= 500 && status <= 599) {
    return { code: 'server_error', message: `HTTP ${status} from the provider${said}`, retryable: true, retryAfterMs };
  }
  if (status >= 300 && status <= 399) {
    return {
      code: 'unexpected_redirect',
      message: `HTTP ${status} from the provider: redirects are not followed, check the baseUrl`,
      retryable: false,
    };
  }
  return {
    code: CLIENT_ERRORS[status] ?? 'http_error',
    message: `HTTP ${status} from the provider${said}`,
    retryable: false,
  };
}

/**
 * The wait before retry number `retryIndex` (0 for the first retry).
 * - With Retry-After: what the provider asked plus up to 10% jitter (so a crowd of clients does not come
 *   back in the same millisecond), capped at maxDelayMs.
 * - Without: exponential backoff base·2^n, capped at maxDelayMs, with "equal jitter" (between half and
 *   all of it), which keeps a floor under the wait while still spreading clients out.
 */
export function retryDelayMs(
  retryIndex: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(policy.maxDelayMs, retryAfterMs * (1 + 0.1 * random()));
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return exponential / 2 + (random() * exponential) / 2;
}

/**
 * Retry-After as milliseconds from `now`: OpenAI's `retry-after-ms` first, then `Retry-After` as
 * delta-seconds or an HTTP date (RFC 9110 §10.2.3). Unparseable → undefined; a date in the past → 0.
 */
export function parseRetryAfter(
  header: (name: string) => string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  const ms = header('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const value = header('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Waits `ms`, or until `signal` aborts (→ false). Re-arms if a timer fires early: Node measures timers
 * against a cached loop clock, so one can fire a little before the real deadline, and a Retry-After must
 * never be cut short.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  const deadline = performance.now() + ms;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const arm = () => {
      const left = deadline - performance.now();
      if (left <= 0) {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
        return;
      }
      timer = setTimeout(arm, Math.ceil(left));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
  });
}

/** Replaces every occurrence of the secret; error text never carries the key, whatever a server echoes. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join('[redacted]');
}

/** The provider's own message (clipped); for a body that is not JSON (a proxy's HTML page), its start. */
function providerSays(body: unknown, text: string): string {
  const own = errorMessageOf(body);
  const message = own ?? (body === undefined ? text.trim() : '');
  if (!message) return '';
  const max = own === undefined ? 200 : 1000;
  return `: ${message.length > max ? `${message.slice(0, max)}…` : message}`;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
