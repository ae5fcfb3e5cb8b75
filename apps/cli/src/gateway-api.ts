import type { Command } from 'commander';
import { LOCAL_DEMO_API_KEY, type CliConfig } from './cli.config';
import { CliError, UsageError } from './cli.errors';

/** Where the CLI's operator actions go: the gateway's HTTP API, with the operator's own credential. */
export interface GatewayTarget {
  gateway: string;
  apiKey: string;
  timeoutMs?: number;
}

export interface GatewayOptions {
  gateway?: string;
  apiKey?: string;
}

/** `--gateway` and `--api-key`, for commands that act through the gateway (its roles and four-eyes apply). */
export function withGatewayOptions(cmd: Command): Command {
  return cmd
    .option('--gateway <url>', 'gateway base URL (default: http://127.0.0.1:$GATEWAY_PORT, port 8080)')
    .option(
      '--api-key <key>',
      `API key or JWT (default: $RATCHET_API_KEY, else the local dev key ${LOCAL_DEMO_API_KEY})`,
    );
}

export function gatewayTarget(config: CliConfig, options: GatewayOptions): GatewayTarget {
  const gateway = options.gateway ?? `http://127.0.0.1:${config.GATEWAY_PORT}`;
  if (!URL.canParse(gateway) || !/^https?:$/.test(new URL(gateway).protocol)) {
    throw new UsageError(`invalid --gateway ${JSON.stringify(gateway)}: expected an http(s):// URL`);
  }
  return { gateway, apiKey: options.apiKey ?? config.RATCHET_API_KEY ?? LOCAL_DEMO_API_KEY };
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

export interface GatewayAnswer {
  status: number;
  body: unknown;
  text: string;
}

/**
 * One request to the gateway. A 2xx answers its body; anything else is a CliError that says what the
 * gateway said (problem details `detail`) and what to do: unreachable, refused credential, 4xx/5xx.
 */
export async function gatewayRequest(
  target: GatewayTarget,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<GatewayAnswer> {
  const url = new URL(path, target.gateway).toString();
  const timeoutMs = target.timeoutMs ?? 10_000;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${target.apiKey}`,
        accept: 'application/json',
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new CliError(
        `the gateway at ${target.gateway} did not answer within ${timeoutMs / 1000}s`,
        undefined,
        'gateway.timeout',
        { cause: error },
      );
    }
    const code = errorCode(error);
    const why = code && UNREACHABLE.has(code) ? code : (code ?? (error as Error).message);
    throw new CliError(
      `cannot reach the gateway at ${target.gateway} (${why}). Start the services with \`npm start\`, or pass --gateway <url>.`,
      undefined,
      'gateway.unreachable',
      { cause: error },
    );
  }
  const text = await response.text();
  const body = parseJson(text);
  if (response.status === 401) {
    throw new CliError(
      `the gateway at ${target.gateway} refused the credential (401${describe(body, text)}). ` +
        'Pass --api-key <key> or set RATCHET_API_KEY (locally, `npm start` seeds rk_local_demo_key).',
      undefined,
      'gateway.unauthorized',
    );
  }
  if (!response.ok) {
    const code =
      { 403: 'gateway.forbidden', 404: 'gateway.not_found', 409: 'gateway.conflict' }[response.status] ??
      'gateway.refused';
    throw new CliError(`the gateway answered ${response.status}${describe(body, text)}`, undefined, code);
  }
  return { status: response.status, body, text };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `: detail` from problem details (or `{error: {code, message}}`, `{message}`), else the text. */
export function describe(body: unknown, text: string): string {
  const b = body as
    { error?: unknown; message?: unknown; code?: unknown; detail?: unknown; title?: unknown } | undefined;
  if (typeof b?.detail === 'string') return `: ${b.detail}`;
  if (typeof b?.title === 'string') return `: ${b.title}`;
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
