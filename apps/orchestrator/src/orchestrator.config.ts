import path from 'node:path';
import { z } from 'zod';
import { envBoolean, envPort, envString, extendConfig } from '@ratchet/platform';

export const orchestratorConfigSchema = extendConfig({
  /** Health probes; each service has its own default so all of them fit on one machine. */
  HEALTH_PORT: envPort().default(9091),
  /** Agent definitions (YAML/JSON) registered at start; unchanged files make no new version. */
  AGENTS_DIR: envString().default(path.resolve(__dirname, '../../../agents')),
  /** Each orchestrator process also runs a model worker unless this is false. */
  MODEL_WORKER: envBoolean().default(true),
});
export type OrchestratorConfig = z.output<typeof orchestratorConfigSchema>;
