import { z } from 'zod';
import { envInt, envPort, extendConfig } from '@ratchet/platform';

export const toolExecutorConfigSchema = extendConfig({
  HEALTH_PORT: envPort().default(9092),
  /** Tool calls handled at once. */
  TOOL_CONCURRENCY: envInt({ min: 1, max: 1000 }).default(8),
  /** Tools served by other services: `name:kind[:timeoutMs],...` (docs/tools.md). */
  REMOTE_TOOLS: z.string().default(''),
});
export type ToolExecutorConfig = z.output<typeof toolExecutorConfigSchema>;
