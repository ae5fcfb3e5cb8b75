import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { MEMORY_MIGRATIONS } from '@ratchet/adapters';
import { envPort, extendConfig, loadConfig, RuntimeModule, runMain, startService } from '@ratchet/platform';

const configSchema = extendConfig({ HEALTH_PORT: envPort().default(9094) });

/**
 * The memory service: owns the `memory` schema (migrated at start) and serves its health probes.
 * Its message handlers arrive with the memory capability; until then it consumes nothing.
 */
runMain('memory', async () => {
  const config = loadConfig(configSchema, process.env, 'memory');
  await startService({
    service: 'memory',
    schema: 'memory',
    migrations: MEMORY_MIGRATIONS,
    consumers: [],
    config,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    module: (runtime) => {
      @Module({ imports: [RuntimeModule.forRuntime(runtime)] })
      class MemoryModule {}
      return MemoryModule;
    },
  });
});
