import { configFields, envInt, envMillis, extendConfig } from '@ratchet/platform';
import type { z } from 'zod';

/**
 * The gateway's environment: the shared base, its HTTP listener, the optional bootstrap key, and two
 * limits of its own. Parsed once in main.ts; everything else receives the typed result.
 */
export const gatewayConfigSchema = extendConfig({
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
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** Roles a bootstrap key receives: everything, since it exists to get a fresh environment going. */
export const BOOTSTRAP_KEY_ROLES = ['runner', 'viewer', 'approver', 'admin'] as const;
