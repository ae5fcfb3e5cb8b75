import 'reflect-metadata';
import { MEMORY_MIGRATIONS } from '@ratchet/adapters';
import { loadConfig, runMain, startService } from '@ratchet/platform';
import { memoryConfigSchema } from './memory.config';
import { MemoryModule } from './memory.module';

/**
 * The memory service: owns the `memory` schema (migrated at start) and answers request/reply calls on
 * `<prefix>.memory.<tenant>.<op>`. It binds no JetStream consumer: memory is asked, never told.
 */
runMain('memory', async () => {
  const config = loadConfig(memoryConfigSchema, process.env, 'memory');
  const { runtime } = await startService({
    service: 'memory',
    schema: 'memory',
    migrations: MEMORY_MIGRATIONS,
    consumers: [],
    config,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    module: (rt) => MemoryModule.create(rt, config),
  });
  runtime.logger.info(
    { subjects: `${config.RATCHET_SUBJECT_PREFIX}.memory.*.*`, retention: config.MEMORY_RETENTION },
    'memory answering requests',
  );
});
