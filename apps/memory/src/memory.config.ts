import { z } from 'zod';
import { envInt, envPort, extendConfig } from '@ratchet/platform';
import { envRetention } from './config/retention.env';

export const memoryConfigSchema = extendConfig({
  HEALTH_PORT: envPort().default(9094),
  /** An item's value, as JSON, in UTF-8 bytes. */
  MEMORY_MAX_VALUE_BYTES: envInt({ min: 1, max: 512 * 1024 }).default(64 * 1024),
  /** A writer-given searchable text; a text derived from the value is cut to this instead of refused. */
  MEMORY_MAX_TEXT_BYTES: envInt({ min: 1, max: 256 * 1024 }).default(16 * 1024),
  /** Bounded so (tenant, namespace, key) always fits one btree index entry. */
  MEMORY_MAX_KEY_BYTES: envInt({ min: 1, max: 1024 }).default(256),
  /** How long items under a namespace prefix may outlive their last write; see envRetention. */
  MEMORY_RETENTION: envRetention().default({ 'sessions/': 7 * 86_400 }),
  /** How often expired items are purged (they are invisible to reads from their expiry on anyway). */
  MEMORY_SWEEP_INTERVAL_MS: envInt({ min: 100, expected: 'expected milliseconds, an integer >= 100' }).default(60_000),
  /** Rows deleted per statement; a sweep runs statements until one deletes fewer. */
  MEMORY_SWEEP_BATCH: envInt({ min: 1, max: 10_000 }).default(500),
});
export type MemoryConfig = z.output<typeof memoryConfigSchema>;
