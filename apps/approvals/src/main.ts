import 'reflect-metadata';
import { APPROVALS_MIGRATIONS } from '@ratchet/adapters';
import { loadConfig, runMain, startService } from '@ratchet/platform';
import { APPROVALS_CONSUMER } from './approval-commands.controller';
import { approvalsConfigSchema } from './approvals.config';
import { ApprovalsModule } from './approvals.module';

/**
 * The approvals service: owns the `approvals` schema (approvals, decisions, audit), consumes approval
 * and escalation requests, answers list/get/decide/verify over request/reply and expires what nobody
 * decided in time (docs/approvals.md).
 */
runMain('approvals', async () => {
  const config = loadConfig(approvalsConfigSchema, process.env, 'approvals');
  await startService({
    service: 'approvals',
    schema: 'approvals',
    migrations: APPROVALS_MIGRATIONS,
    consumers: [APPROVALS_CONSUMER],
    config,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    module: (runtime) => ApprovalsModule.create(runtime, { sweepIntervalMs: config.APPROVALS_SWEEP_INTERVAL_MS }),
  });
});
