import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { APPROVALS_MIGRATIONS } from '@ratchet/adapters';
import { envPort, extendConfig, loadConfig, RuntimeModule, runMain, startService } from '@ratchet/platform';

const configSchema = extendConfig({ HEALTH_PORT: envPort().default(9093) });

/**
 * The approvals service: owns the `approvals` schema (migrated at start) and serves its health probes.
 * Its message handlers arrive with the approvals capability; until then it consumes nothing.
 */
runMain('approvals', async () => {
  const config = loadConfig(configSchema, process.env, 'approvals');
  await startService({
    service: 'approvals',
    schema: 'approvals',
    migrations: APPROVALS_MIGRATIONS,
    consumers: [],
    config,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    module: (runtime) => {
      @Module({ imports: [RuntimeModule.forRuntime(runtime)] })
      class ApprovalsModule {}
      return ApprovalsModule;
    },
  });
});
