import type { z } from 'zod';
import { envMillis, envPort, extendConfig } from '@ratchet/platform';

export const approvalsConfigSchema = extendConfig({
  HEALTH_PORT: envPort().default(9093),
  /** How often pending approvals past their deadline are expired. */
  APPROVALS_SWEEP_INTERVAL_MS: envMillis().default(1_000),
});
export type ApprovalsConfig = z.output<typeof approvalsConfigSchema>;
