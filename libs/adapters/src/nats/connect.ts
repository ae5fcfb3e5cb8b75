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

/**
 * The servers of a NATS_URL and the `user:pass@` it carries. nats.js does not read credentials from a
 * server URL (it connects without them and the server answers "authentication error"), so they are
 * taken out of the URLs and given as `user`/`pass` (or `token`); every URL of a list names the same user.
 */
export function natsServersAndAuth(url: string): { servers: string[]; user?: string; pass?: string; token?: string } {
  let user: string | undefined;
  let pass: string | undefined;
  let token: string | undefined;
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((one) =>
      one.replace(/^([a-z]+:\/\/)?([^@/]*)@/i, (_m, scheme: string | undefined, auth: string) => {
        const colon = auth.indexOf(':');
        // `nats://<token>@host`: a bare user part is a token, as nats-server reads it.
        if (colon < 0) token ??= decodeURIComponent(auth);
        else {
          user ??= decodeURIComponent(auth.slice(0, colon));
          pass ??= decodeURIComponent(auth.slice(colon + 1));
        }
        return scheme ?? '';
      }),
    );
  return {
    servers,
    ...(user !== undefined ? { user } : {}),
    ...(pass !== undefined ? { pass } : {}),
    ...(token !== undefined ? { token } : {}),
  };
}

/**
 * Connects and proves JetStream answers, so a misconfigured environment fails at start with a message
 * a human can act on instead of on the first publish. After the first connection the client
 * reconnects forever: a service must survive a nats-server restart without its supervisor.
 */
export async function connectNats(opts: ConnectNatsOptions): Promise<NatsConnection> {
  const shown = redactNatsUrl(opts.url);
  let nc: NatsConnection;
  try {
    nc = await connect({
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // Without this the client captures a stack trace (an Error) for every request, each JetStream
      // publish included, only to enrich a timeout's message: measurable CPU on every message.
      noAsyncTraces: true,
      ...natsServersAndAuth(opts.url),
      ...opts.options,
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
