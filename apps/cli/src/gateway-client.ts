import { z } from 'zod';
import { CliError } from './cli.errors';

/** What the gateway answers to `POST /v1/runs` (202, or 200 when the idempotency key was seen before). */
export const StartedRun = z.object({
  runId: z.string().min(1),
  threadId: z.string().min(1),
  requestId: z.string().optional(),
  tenantId: z.string().optional(),
});
export type StartedRun = z.infer<typeof StartedRun>;

export interface StartRunRequest {
  gateway: string;
  apiKey: string;
  idempotencyKey: string;
  agent: string;
  input: string;
  timeoutMs?: number;
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ECONNRESET',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Starts a run through the gateway's HTTP API and returns its ids. Errors say what to do next. */
export async function startRun(req: StartRunRequest): Promise<StartedRun> {
  const url = new URL('/v1/runs', req.gateway).toString();
  const timeoutMs = req.timeoutMs ?? 10_000;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${req.apiKey}`,
        'idempotency-key': req.idempotencyKey,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({ agent: req.agent, input: req.input }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new CliError(
        `the gateway at ${req.gateway} did not answer within ${timeoutMs / 1000}s`,
        undefined,
        'gateway.timeout',
        { cause: error },
      );
    }
    const code = errorCode(error);
    const why = code && UNREACHABLE.has(code) ? code : (code ?? (error as Error).message);
    throw new CliError(
      `cannot reach the gateway at ${req.gateway} (${why}). Start the services with \`npm start\`, or pass --gateway <url>.`,
      undefined,
      'gateway.unreachable',
      { cause: error },
    );
  }
  const text = await response.text();
  const body = parseJson(text);
  if (response.status === 401 || response.status === 403) {
    throw new CliError(
      `the gateway at ${req.gateway} refused the API key (${response.status}${describe(body, text)}). ` +
        'Pass --api-key <key> or set RATCHET_API_KEY (locally, `npm start` seeds rk_local_demo_key).',
      undefined,
      'gateway.unauthorized',
    );
  }
  if (!response.ok) {
    throw new CliError(
      `the gateway at ${req.gateway} answered ${response.status}${describe(body, text)}`,
      undefined,
      'gateway.refused',
    );
  }
  const parsed = StartedRun.safeParse(body);
  if (!parsed.success) {
    throw new CliError(
      `the gateway at ${req.gateway} answered ${response.status} without runId and threadId: ${text.slice(0, 200)}`,
      undefined,
      'gateway.bad_response',
    );
  }
  return parsed.data;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `: code: message` from the usual error bodies (`{error: {code, message}}`, `{message}`), else the text. */
function describe(body: unknown, text: string): string {
  const b = body as { error?: unknown; message?: unknown; code?: unknown } | undefined;
  const inner = (typeof b?.error === 'object' && b.error !== null ? b.error : b) as
    { code?: unknown; message?: unknown } | undefined;
  const message =
    typeof inner?.message === 'string' ? inner.message : typeof b?.error === 'string' ? b.error : undefined;
  if (message) return `: ${typeof inner?.code === 'string' ? `${inner.code}: ` : ''}${message}`;
  const plain = text.trim().replace(/\s+/g, ' ').slice(0, 200);
  return plain ? `: ${plain}` : '';
}

/** fetch wraps the socket error: `TypeError('fetch failed', { cause })`, sometimes an AggregateError. */
function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const nested = (e as { errors?: unknown[] }).errors?.[0];
    e = nested ?? (e as { cause?: unknown }).cause;
  }
  return undefined;
}
