import { createGatewayClient, expectOk, GatewayError, type GatewayClient } from '@ratchet/http-client';
import { LOCAL_DEMO_API_KEY, type CliConfig } from './config';
import { CliError, UsageError } from './errors';

/** Where the CLI's operator actions go: the gateway's HTTP API, with the operator's own credential. */
export interface Gateway {
  url: string;
  client: GatewayClient;
}

export interface GatewayOptions {
  gateway?: string;
  apiKey?: string;
}

/** The generated client (@ratchet/http-client) aimed at `--gateway` with `--api-key`. */
export function gateway(config: CliConfig, options: GatewayOptions, timeoutMs = 10_000): Gateway {
  const url = options.gateway ?? `http://127.0.0.1:${config.GATEWAY_PORT}`;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new UsageError(`invalid --gateway ${JSON.stringify(url)}: expected an http(s):// URL`);
  }
  const apiKey = options.apiKey ?? config.RATCHET_API_KEY ?? LOCAL_DEMO_API_KEY;
  return { url, client: createGatewayClient({ baseUrl: url, credential: () => apiKey, timeoutMs }) };
}

/**
 * One call's 2xx data; anything else is a CliError that says what the gateway said (problem details
 * `detail`) and what to do next: unreachable, refused credential, 4xx/5xx.
 */
export async function call<D>(
  target: Gateway,
  pending: Promise<{ data?: D; error?: unknown; response: Response }>,
): Promise<NonNullable<D>> {
  try {
    return await expectOk(pending);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    throw new CliError(explain(target.url, error), undefined, error.code, { cause: error });
  }
}

function explain(url: string, error: GatewayError): string {
  switch (error.code) {
    case 'gateway.unreachable':
      return `cannot reach the gateway at ${url} (${error.details.reason}). Start the services with \`npm start\`, or pass --gateway <url>.`;
    case 'gateway.unauthorized':
      return (
        `the gateway at ${url} refused the credential (${error.message.replace('the gateway answered ', '')}). ` +
        'Pass --api-key <key> or set RATCHET_API_KEY (locally, `npm start` seeds rk_local_demo_key).'
      );
    case 'gateway.timeout':
    case 'gateway.forbidden':
    case 'gateway.not_found':
    case 'gateway.conflict':
    case 'gateway.invalid':
    case 'gateway.rate_limited':
    case 'gateway.unavailable':
    case 'gateway.refused':
      return error.message;
    default: {
      const _exhaustive: never = error.code;
      return _exhaustive;
    }
  }
}
