import 'reflect-metadata';
import { ORCHESTRATOR_MIGRATIONS } from '@ratchet/adapters';
import { loadConfig, runMain, startService } from '@ratchet/platform';
import { BUILTIN_TOOLS, parseRemoteTools, remoteTool, ToolRegistry } from '@ratchet/tools';
import type { AgentCatalog } from './agents/agent-catalog';
import { MODEL_CONSUMER } from './models/model-worker.controller';
import { orchestratorConfigSchema } from './orchestrator.config';
import { createCatalog, OrchestratorModule } from './orchestrator.module';
import { REQUESTS_CONSUMER } from './threads/run-request.controller';
import { INBOX_CONSUMER } from './threads/thread-inbox.controller';

runMain('orchestrator', async () => {
  const config = loadConfig(orchestratorConfigSchema, process.env, 'orchestrator');
  // The orchestrator needs only the specs of remote tools (what the model sees); the executor calls them.
  const noTransport = { request: () => Promise.reject(new Error('remote tools are called by the tool executor')) };
  const tools = new ToolRegistry([
    ...BUILTIN_TOOLS,
    ...parseRemoteTools(config.REMOTE_TOOLS).map((d) => remoteTool(d, noTransport)),
  ]);
  let catalog: AgentCatalog | undefined;
  await startService({
    service: 'orchestrator',
    schema: 'orchestrator',
    migrations: ORCHESTRATOR_MIGRATIONS,
    consumers: [REQUESTS_CONSUMER, INBOX_CONSUMER, ...(config.MODEL_WORKER ? [MODEL_CONSUMER] : [])],
    config,
    healthPort: config.HEALTH_PORT,
    maxMessages: {
      [REQUESTS_CONSUMER]: config.REQUEST_CONCURRENCY,
      [INBOX_CONSUMER]: config.INBOX_CONCURRENCY,
      [MODEL_CONSUMER]: config.MODEL_CONCURRENCY,
    },
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    prepare: async (runtime) => {
      catalog = createCatalog(runtime, tools);
      const agents = await catalog.registerDirectory(config.AGENTS_DIR);
      runtime.logger.info({ agents: agents.map((a) => `${a.name}@${a.version}`) }, 'agents registered');
    },
    module: (runtime) => {
      if (!catalog) throw new Error('agent catalog not prepared');
      return OrchestratorModule.create(runtime, catalog, tools, {
        modelWorker: config.MODEL_WORKER,
        watchdog: {
          intervalMs: config.WATCHDOG_INTERVAL_MS,
          minIdleMs: config.WATCHDOG_MIN_IDLE_MS,
          lostAfterMs: config.WATCHDOG_LOST_AFTER_MS,
        },
        groupCommitMax: config.GROUP_COMMIT_MAX,
        localModelCalls: config.MODEL_LOCAL_CALLS,
        localTools: config.LOCAL_TOOLS,
        shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
      });
    },
  });
});
