import { performance } from 'node:perf_hooks';
import { errorMessageOf } from './openai.mapping';
import { classifyFailure, parseRetryAfter, redact, retryDelayMs, sleep } from './openai.retry';

describe('OpenAI retry policy helpers', () => {
  const policy = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1_000 };

  it('backs off exponentially with equal jitter, capped', () => {
    expect(retryDelayMs(0, undefined, policy, () => 0)).toBe(50);
    expect(retryDelayMs(0, undefined, policy, () => 0.999)).toBeCloseTo(100, 0);
    expect(retryDelayMs(2, undefined, policy, () => 0)).toBe(200);
    expect(retryDelayMs(10, undefined, policy, () => 1)).toBe(1_000);
  });

  it('waits at least what Retry-After asks (plus jitter), capped at the maximum', () => {
    expect(retryDelayMs(0, 700, policy, () => 0)).toBe(700);
    expect(retryDelayMs(0, 700, policy, () => 0.5)).toBe(735);
    expect(retryDelayMs(0, 60_000, policy, () => 0)).toBe(1_000);
  });

  it('parses Retry-After as seconds, HTTP date or retry-after-ms', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    const headers = (h: Record<string, string>) => (name: string) => h[name];
    expect(parseRetryAfter(headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(parseRetryAfter(headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' }), now)).toBe(3_000);
    expect(parseRetryAfter(headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now)).toBe(0);
    expect(parseRetryAfter(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(headers({}), now)).toBeUndefined();
  });

  it('classifies statuses: 429/5xx/408 retryable, 4xx not, an exhausted quota not', () => {
    const res = (status: number, body: unknown = {}) =>
      classifyFailure({ kind: 'response', status, text: JSON.stringify(body), retryAfterMs: undefined });
    expect(res(429)).toMatchObject({ code: 'rate_limited', retryable: true });
    expect(res(429, { error: { message: 'quota', code: 'insufficient_quota' } })).toMatchObject({
      code: 'quota_exceeded',
      retryable: false,
    });
    expect(res(503)).toMatchObject({ code: 'server_error', retryable: true });
    expect(res(408)).toMatchObject({ code: 'timeout', retryable: true });
    expect(res(400, { error: { message: 'bad things' } })).toEqual({
      code: 'bad_request',
      message: 'HTTP 400 from the provider: bad things',
      retryable: false,
    });
    expect(res(401)).toMatchObject({ code: 'unauthorized', retryable: false });
    expect(res(403)).toMatchObject({ code: 'forbidden', retryable: false });
    expect(res(404, { error: 'model "x" not found' })).toMatchObject({
      code: 'not_found',
      message: /model "x" not found/,
    });
    expect(res(302)).toMatchObject({ code: 'unexpected_redirect', retryable: false });
    expect(classifyFailure({ kind: 'timeout' })).toMatchObject({ code: 'timeout', retryable: true });
    expect(classifyFailure({ kind: 'network', detail: 'ECONNRESET' })).toMatchObject({
      code: 'network',
      retryable: true,
    });
  });

  it('reads provider messages in the shapes servers use', () => {
    expect(errorMessageOf({ error: { message: 'openai' } })).toBe('openai');
    expect(errorMessageOf({ error: 'ollama' })).toBe('ollama');
    expect(errorMessageOf({ object: 'error', message: 'vllm' })).toBe('vllm');
    expect(errorMessageOf({ detail: 'other' })).toBe('other');
    expect(errorMessageOf('nope')).toBeUndefined();
  });

  it('redacts every occurrence of the key', () => {
    expect(redact('key sk-123 and sk-123 again', 'sk-123')).toBe('key [redacted] and [redacted] again');
    expect(redact('nothing', undefined)).toBe('nothing');
  });

  it('sleeps the full time, or stops at an abort', async () => {
    const start = performance.now();
    expect(await sleep(30)).toBe(true);
    expect(performance.now() - start).toBeGreaterThanOrEqual(30);
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal);
    controller.abort();
    expect(await pending).toBe(false);
  });
});
