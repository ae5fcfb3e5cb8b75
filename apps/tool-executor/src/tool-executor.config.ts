import { z } from 'zod';
import { envPort, extendConfig } from '@ratchet/platform';

export const toolExecutorConfigSchema = extendConfig({
  HEALTH_PORT: envPort().default(9092),
});
export type ToolExecutorConfig = z.output<typeof toolExecutorConfigSchema>;
