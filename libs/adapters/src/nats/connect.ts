import { connect, type ConnectionOptions, type NatsConnection } from 'nats';

export interface ConnectNatsOptions {
  /** One URL or a comma-separated list (`nats://a:4222,nats://b:4222`). May carry `user:pass@`. */
  url: string;
  /** Shows up in the server's connection list (`nats server report connections`): use the service name. */
  name: string;
  /** How long to wait for the first connection, ms. Default 5000. */
  timeoutMs?: number;
  /** Extra nats.js options (tls, authenticator…); `servers`, `name` and `timeout` are set from the above. */
  options?: Omit<ConnectionOptions, 'servers' | 'name' | 'timeout'>;
}

/** `nats://user:secret@host:4222` → `nats://user:***@host:4222`, for error messages and logs. */
export function redactNatsUrl(url: string): string {
  return url
    .split(',')
    .map((one) =>
      one.trim().replace(/^([a-z]+:\/\/)?([^@/]*)@/i, (_m, scheme: string | undefined, auth: string) => {
        const user = auth.includes(':') ? auth.slice(0, auth.indexOf(':')) : '***';
        return `${scheme ?? ''}${auth.includes(':') ? `${user}:***` : user}@`;
      }),
    )
    .join(',');
}

/** The servers of a NATS URL list and the credentials some of them carry (`user:pass@` or `token@`). */
export interface NatsServersAndAuth {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
}

/**
 * Splits `nats://user:secret@a:4222,nats://b:4222` into the servers without credentials and the
 * credentials, which nats.js takes only as options (it ignores them in a server URL, and the server then
 * answers "Authorization Violation"). Percent-escapes in a user or password are decoded. Servers that carry
 * different credentials are refused: a connection has one identity.
 */
export function natsServersAndAuth(url: string): NatsServersAndAuth {
  const out: NatsServersAndAuth = { servers: [] };
  let seen: string | undefined;
  for (const one of url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)) {
    const m = /^([a-z]+:\/\/)?([^@/]*)@(.*)$/i.exec(one);
    if (!m) {
      out.servers.push(one);
      continue;
    }
    const [, scheme = '', auth = '', rest = ''] = m;
    out.servers.push(`${scheme}${rest}`);
    if (seen !== undefined && seen !== auth)
      throw new Error(`NATS_URL: the servers of ${redactNatsUrl(url)} carry different credentials; give them one`);
    seen = auth;
    const colon = auth.indexOf(':');
    if (colon >= 0) {
      out.user = decodeURIComponent(auth.slice(0, colon));
      out.pass = decodeURIComponent(auth.slice(colon + 1));
    } else if (auth.length > 0) {
      out.token = decodeURIComponent(auth);
    }
  }
  return out;
}

/**
 * Connects and proves JetStream answers, so a misconfigured environment fails at start with a message
 * a human can act on instead of on the first publish. After the first connection the client
 * reconnects forever: a service must survive a nats-server restart without its supervisor.
 */
export async function connectNats(opts: ConnectNatsOptions): Promise<NatsConnection> {
  const shown = redactNatsUrl(opts.url);
  const { servers, ...auth } = natsServersAndAuth(opts.url);
  let nc: NatsConnection;
  try {
    nc = await connect({
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // Without this the client captures a stack trace (an Error) for every request, each JetStream
      // publish included, only to enrich a timeout's message: measurable CPU on every message.
      noAsyncTraces: true,
      ...auth,
      ...opts.options,
      servers,
      name: opts.name,
      timeout: opts.timeoutMs ?? 5000,
    });
  } catch (error) {
    throw new Error(
      `cannot connect to NATS at ${shown} (${describe(error)}). ` +
        'Is nats-server running with JetStream? Locally: `docker compose up -d nats postgres`.',
      { cause: error },
    );
  }
  try {
    // jetstreamManager() issues $JS.API.INFO and throws when the server (or account) has no JetStream.
    await nc.jetstreamManager();
  } catch (error) {
    await nc.close().catch(() => undefined);
    throw new Error(
      `NATS at ${shown} answered but JetStream is not available (${describe(error)}). ` +
        'Start nats-server with `-js` (JetStream enabled), e.g. `docker compose up -d nats postgres`.',
      { cause: error },
    );
  }
  return nc;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && code !== error.message ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
