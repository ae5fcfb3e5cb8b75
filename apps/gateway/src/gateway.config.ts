import { parseCallbackKeys } from '@ratchet/http-edge';
import { configFields, envBoolean, envInt, envMillis, envString, extendConfig } from '@ratchet/platform';
import { z } from 'zod';

/** Asymmetric JWS algorithms only: a JWKS publishes public keys, and `none` is never a signature. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

const jwtAlgorithms = z
  .string({ error: `expected a comma-separated list of ${JWT_ALGORITHMS.join(', ')}` })
  .transform((value) =>
    value
      .split(',')
      .map((a) => a.trim())
      .filter((a) => a !== ''),
  )
  .pipe(
    z
      .array(z.enum(JWT_ALGORITHMS, { error: `expected a comma-separated list of ${JWT_ALGORITHMS.join(', ')}` }))
      .min(1, { error: 'expected at least one algorithm' }),
  );

const httpUrl = z.string().refine(
  (value) => {
    try {
      return ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  },
  { error: 'expected an http(s):// URL' },
);

/**
 * The gateway's environment: the shared base, its HTTP listener, the optional bootstrap key, JWT
 * verification, the per-credential rate limit, and its own timeouts. Parsed once in main.ts;
 * everything else receives the typed result.
 */
export const gatewayConfigSchema = extendConfig({
  /** The master key file: the live event feed carries threads' content sealed (docs/security.md). */
  RATCHET_KEY_FILE: configFields.RATCHET_KEY_FILE,
  GATEWAY_PORT: configFields.GATEWAY_PORT,
  GATEWAY_HOST: configFields.GATEWAY_HOST,
  GATEWAY_BOOTSTRAP_API_KEY: configFields.GATEWAY_BOOTSTRAP_API_KEY,
  GATEWAY_BOOTSTRAP_TENANT: configFields.GATEWAY_BOOTSTRAP_TENANT,
  /** Largest accepted request body; a bigger one is refused with 413 before it is parsed. */
  GATEWAY_BODY_LIMIT_BYTES: envInt({
    min: 1024,
    max: 64 * 1024 * 1024,
    expected: 'expected a byte count from 1024 to 67108864',
  }).default(1024 * 1024),
  /**
   * How long a request waits for JetStream to acknowledge the run request before answering 503.
   * Short, because an HTTP client is waiting and will retry with the same Idempotency-Key.
   */
  GATEWAY_PUBLISH_TIMEOUT_MS: envMillis().default(5_000),
  /** How long a read waits for the orchestrator, the memory service or the agents API (503 after). */
  GATEWAY_QUERY_TIMEOUT_MS: envMillis().default(5_000),
  /**
   * How long an Idempotency-Key is held for the gateway answering it: a gateway that dies while answering
   * leaves the key `409 request.in_progress` this long. Keep it well above the timeouts above.
   */
  GATEWAY_IDEMPOTENCY_HOLD_SECONDS: envInt({
    min: 1,
    max: 3600,
    expected: 'expected a number of seconds from 1 to 3600',
  }).default(60),
  /** Accept webhook URLs to loopback and private addresses (tests, in-cluster receivers); see docs/webhooks.md. */
  WEBHOOK_ALLOW_PRIVATE: envBoolean().default(false),
  /** JWT bearer tokens are accepted only when this is set: the issuer's JWKS (public keys). */
  GATEWAY_JWT_JWKS_URL: httpUrl.optional(),
  /** The `iss` every token must carry (required with GATEWAY_JWT_JWKS_URL). */
  GATEWAY_JWT_ISSUER: envString().optional(),
  /** The `aud` every token must carry (required with GATEWAY_JWT_JWKS_URL). */
  GATEWAY_JWT_AUDIENCE: envString().optional(),
  /** Pinned signature algorithms; a token signed with any other (or `none`) is refused. */
  GATEWAY_JWT_ALGORITHMS: jwtAlgorithms.default(['RS256']),
  /**
   * Requests per minute per credential (API key or JWT subject), as a token bucket of that size
   * refilled continuously; 0 turns the limit off. Kept in memory: the limit applies per replica.
   */
  GATEWAY_RATE_LIMIT_PER_MINUTE: envInt({ min: 0, max: 1_000_000 }).default(600),
  /** Requests per minute per tenant, all its credentials together (same bucket shape); 0 turns it off. */
  GATEWAY_TENANT_RATE_LIMIT_PER_MINUTE: envInt({ min: 0, max: 10_000_000 }).default(3_000),
  /**
   * Failed authentications per minute per source address; past it, every request from that address
   * answers 429 until the bucket refills (the credential is not even looked up). 0 turns it off.
   */
  GATEWAY_AUTH_FAILURES_PER_MINUTE: envInt({ min: 0, max: 1_000_000 }).default(30),
  /**
   * Express's `trust proxy` setting, for the source address behind a load balancer: a hop count,
   * `loopback`, or a comma-separated list of proxy addresses/CIDRs. Unset: the socket's peer address.
   */
  GATEWAY_TRUST_PROXY: envString().optional(),
  /**
   * Keys of waitpoints' signed callback URLs (docs/waitpoints.md): `id:secret[,id:secret…]`, secrets of at
   * least 32 characters; the first signs, all verify (rotation). Unset: no callback URLs.
   */
  WAITPOINT_CALLBACK_KEYS: envString().optional(),
}).superRefine((config, ctx) => {
  if (config.WAITPOINT_CALLBACK_KEYS !== undefined) {
    const keys = parseCallbackKeys(config.WAITPOINT_CALLBACK_KEYS);
    if (!keys.ok) ctx.addIssue({ code: 'custom', path: ['WAITPOINT_CALLBACK_KEYS'], message: keys.problem });
  }
  if (config.GATEWAY_JWT_JWKS_URL === undefined) return;
  for (const name of ['GATEWAY_JWT_ISSUER', 'GATEWAY_JWT_AUDIENCE'] as const) {
    if (config[name] === undefined)
      ctx.addIssue({ code: 'custom', path: [name], message: 'required when GATEWAY_JWT_JWKS_URL is set' });
  }
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** Roles a bootstrap key receives: everything, since it exists to get a fresh environment going. */
export const BOOTSTRAP_KEY_ROLES = ['runner', 'viewer', 'approver', 'admin'] as const;
