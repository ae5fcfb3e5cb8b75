import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './gateway.schema';

export type GatewayPaths = paths;
export type GatewaySchemas = components['schemas'];
export type GatewayClient = Client<paths>;
export type ProblemDetails = components['schemas']['ProblemDetails'];

export interface GatewayClientOptions {
  /** The gateway's origin, e.g. `http://127.0.0.1:8080` (in a browser, `location.origin`). */
  baseUrl: string;
  /** The API key or JWT sent as `Authorization: Bearer …`; read on every request (a console may sign out). */
  credential: () => string | null | undefined;
  /** Each request is aborted after this long (a stream too: leave it unset for a client that follows one). */
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

/**
 * A client of the gateway typed by its OpenAPI document: every path, parameter, body and answer.
 * Requests carry the credential; answers other than 2xx come back as `error` (see `expectOk`).
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  const timeoutMs = options.timeoutMs;
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: async (request: Request) => {
      const signal =
        timeoutMs === undefined ? request.signal : AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]);
      try {
        return await base(new Request(request, { signal }));
      } catch (error) {
        throw transportError(options.baseUrl, timeoutMs, error);
      }
    },
  });
  client.use({
    onRequest({ request }) {
      const credential = options.credential();
      if (credential) request.headers.set('authorization', `Bearer ${credential}`);
      if (!request.headers.has('accept')) request.headers.set('accept', 'application/json');
      return request;
    },
  });
  return client;
}

/** Which failures a caller may retry: the gateway did not answer, or answered 5xx / 429. */
export type GatewayErrorCode =
  | 'gateway.unreachable'
  | 'gateway.timeout'
  | 'gateway.unauthorized'
  | 'gateway.forbidden'
  | 'gateway.not_found'
  | 'gateway.conflict'
  | 'gateway.invalid'
  | 'gateway.rate_limited'
  | 'gateway.unavailable'
  | 'gateway.refused';

/** What went wrong talking to the gateway, with the problem details it answered (if any). */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
    readonly details: {
      status?: number;
      problem?: Partial<ProblemDetails>;
      /** For `gateway.unreachable`: the socket error code (ECONNREFUSED, ENOTFOUND, …). */
      reason?: string;
      cause?: unknown;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }

  get status(): number | undefined {
    return this.details.status;
  }

  /** True when the same request may succeed later unchanged. */
  get retryable(): boolean {
    return ['gateway.unreachable', 'gateway.timeout', 'gateway.rate_limited', 'gateway.unavailable'].includes(
      this.code,
    );
  }
}

/** The answer's data when it is 2xx; otherwise a GatewayError naming the status and the gateway's detail. */
export async function expectOk<D>(
  pending: Promise<{ data?: D; error?: unknown; response: Response }>,
): Promise<NonNullable<D>> {
  const { data, error, response } = await pending;
  if (response.ok) return data as NonNullable<D>;
  throw answerError(response.status, error);
}

export function answerError(status: number, body: unknown): GatewayError {
  const problem = typeof body === 'object' && body !== null ? (body as Partial<ProblemDetails>) : undefined;
  const code: GatewayErrorCode =
    (
      {
        400: 'gateway.invalid',
        401: 'gateway.unauthorized',
        403: 'gateway.forbidden',
        404: 'gateway.not_found',
        409: 'gateway.conflict',
        422: 'gateway.invalid',
        429: 'gateway.rate_limited',
        503: 'gateway.unavailable',
      } as Record<number, GatewayErrorCode>
    )[status] ?? (status >= 500 ? 'gateway.unavailable' : 'gateway.refused');
  return new GatewayError(code, `the gateway answered ${status}${describeProblem(body)}`, {
    status,
    ...(problem ? { problem } : {}),
  });
}

/** `: detail (issue; issue)` from problem details (or `{error: {code, message}}`, `{message}`), else the text. */
export function describeProblem(body: unknown): string {
  if (typeof body === 'string') {
    const plain = body.trim().replace(/\s+/g, ' ').slice(0, 200);
    return plain ? `: ${plain}` : '';
  }
  const b = body as
    { error?: unknown; message?: unknown; detail?: unknown; title?: unknown; errors?: unknown } | null | undefined;
  const issues = Array.isArray(b?.errors)
    ? (b.errors as { detail?: unknown }[]).map((e) => e.detail).filter((d): d is string => typeof d === 'string')
    : [];
  const more = issues.length ? ` (${issues.join('; ')})` : '';
  if (typeof b?.detail === 'string' && b.detail) return `: ${b.detail}${more}`;
  if (typeof b?.title === 'string' && b.title) return `: ${b.title}${more}`;
  const inner = (typeof b?.error === 'object' && b.error !== null ? b.error : b) as
    { code?: unknown; message?: unknown } | null | undefined;
  const message =
    typeof inner?.message === 'string' ? inner.message : typeof b?.error === 'string' ? b.error : undefined;
  if (message) return `: ${typeof inner?.code === 'string' ? `${inner.code}: ` : ''}${message}`;
  return '';
}

function transportError(baseUrl: string, timeoutMs: number | undefined, error: unknown): unknown {
  const name = (error as Error | undefined)?.name;
  if (name === 'TimeoutError')
    return new GatewayError(
      'gateway.timeout',
      `the gateway at ${baseUrl} did not answer within ${(timeoutMs ?? 0) / 1000}s`,
      { cause: error },
    );
  // The caller's own abort (a console leaving a page) stays what it was.
  if (name === 'AbortError') return error;
  const reason = socketCode(error) ?? (error as Error | undefined)?.message ?? String(error);
  return new GatewayError('gateway.unreachable', `cannot reach the gateway at ${baseUrl} (${reason})`, {
    reason,
    cause: error,
  });
}

/** fetch wraps the socket error: `TypeError('fetch failed', { cause })`, sometimes an AggregateError. */
function socketCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const nested = (e as { errors?: unknown[] }).errors?.[0];
    e = nested ?? (e as { cause?: unknown }).cause;
  }
  return undefined;
}
