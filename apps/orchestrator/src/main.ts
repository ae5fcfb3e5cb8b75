import 'reflect-metadata';
import { ORCHESTRATOR_MIGRATIONS, type FairShareOptions } from '@ratchet/adapters';
import { TransientError } from '@ratchet/domain';
import { ConfigError, loadConfig, runMain, startService } from '@ratchet/platform';
import { BUILTIN_TOOLS, loadToolModules, parseToolModuleList, ToolModuleError, ToolRegistry } from '@ratchet/tools';
import type { AgentCatalog, CatalogTools } from '@ratchet/agents';
import { MODEL_CONSUMER } from './models/model-worker.controller';
import { housekeepingFromConfig } from './housekeeping/housekeeping.config';
import { orchestratorConfigSchema } from './orchestrator.config';
import { createCatalog, OrchestratorModule } from './orchestrator.module';
import { REQUESTS_CONSUMER } from './threads/run-request.controller';
import { INBOX_CONSUMER } from './threads/thread-inbox.controller';
import { REVOCATIONS_CONSUMER } from './revocations/revocation-commands.controller';
import { WEBHOOKS_CONSUMER } from './webhooks/webhook-commands.controller';

runMain('orchestrator', async () => {
  const config = loadConfig(orchestratorConfigSchema, process.env, 'orchestrator');
  const housekeeping = housekeepingFromConfig(config);
  // Its own tools: the built-in ones and the tool modules (for `local` tools, which run here). Every
  // other tool (remote services, MCP servers) is the tool executor's: its catalog answers for them.
  let modules;
  try {
    modules = await loadToolModules(parseToolModuleList(config.TOOL_MODULES), {
      taken: new Map(BUILTIN_TOOLS.map((t) => [t.name, 'the built-in tools'])),
    });
  } catch (error) {
    if (error instanceof ToolModuleError)
      throw new ConfigError('orchestrator', [{ variable: 'TOOL_MODULES', expected: error.message }]);
    throw error;
  }
  const tools = new ToolRegistry([...BUILTIN_TOOLS, ...modules]);
  let catalog: AgentCatalog | undefined;
  let catalogTools: CatalogTools | undefined;
  await startService({
    service: 'orchestrator',
    schema: 'orchestrator',
    migrations: ORCHESTRATOR_MIGRATIONS,
    consumers: [
      REQUESTS_CONSUMER,
      INBOX_CONSUMER,
      WEBHOOKS_CONSUMER,
      REVOCATIONS_CONSUMER,
      ...(config.MODEL_WORKER ? [MODEL_CONSUMER] : []),
    ],
    config,
    healthPort: config.HEALTH_PORT,
    maxMessages: {
      [REQUESTS_CONSUMER]: config.REQUEST_CONCURRENCY,
      [INBOX_CONSUMER]: config.INBOX_CONCURRENCY,
      [MODEL_CONSUMER]: config.MODEL_CONCURRENCY,
    },
    // One tenant's flood of requests or results waits behind its own share, not in front of other tenants.
    ...(config.TENANT_SHARE_PERCENT > 0
      ? {
          fairShares: {
            [REQUESTS_CONSUMER]: tenantShare(config.REQUEST_CONCURRENCY, config.TENANT_SHARE_PERCENT),
            [INBOX_CONSUMER]: tenantShare(config.INBOX_CONCURRENCY, config.TENANT_SHARE_PERCENT),
            // `<prefix>.cmd.model.<tenant>`: a deferred call is not an attempt (its row was never claimed).
            [MODEL_CONSUMER]: tenantShare(config.MODEL_CONCURRENCY, config.TENANT_SHARE_PERCENT, 3),
          },
        }
      : {}),
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    prepare: async (runtime) => {
      if (config.REMOTE_TOOLS)
        runtime.logger.warn(
          'REMOTE_TOOLS is read by the tool executor only now: agents see the tools its catalog offers (docs/tools.md)',
        );
      ({ catalog, catalogTools } = createCatalog(runtime, tools));
      const agents = await registerAtStart(catalog, config.AGENTS_DIR, config.AGENTS_TOOLS_WAIT_MS);
      runtime.logger.info({ agents: agents.map((a) => `${a.name}@${a.version}`) }, 'shared agents registered');
    },
    module: (runtime) => {
      if (!catalog || !catalogTools) throw new Error('agent catalog not prepared');
      return OrchestratorModule.create(runtime, catalog, tools, catalogTools, {
        modelWorker: config.MODEL_WORKER,
        watchdog: {
          intervalMs: config.WATCHDOG_INTERVAL_MS,
          minIdleMs: config.WATCHDOG_MIN_IDLE_MS,
          lostAfterMs: config.WATCHDOG_LOST_AFTER_MS,
          batch: config.WATCHDOG_BATCH,
        },
        groupCommitMax: config.GROUP_COMMIT_MAX,
        runAdmission: {
          maxActiveRuns: config.TENANT_MAX_ACTIVE_RUNS,
          maxWaitingRuns: config.TENANT_MAX_WAITING_RUNS,
          overBound: config.TENANT_RUNS_OVER_BOUND,
          passMs: config.ADMISSION_PASS_MS,
        },
        localModelCalls: config.MODEL_LOCAL_CALLS,
        // One tenant's calls use at most its share of them; the rest go to the bus (fair shares there too).
        ...(config.TENANT_SHARE_PERCENT > 0
          ? { localModelCallsPerTenant: shareOf(config.MODEL_LOCAL_CALLS, config.TENANT_SHARE_PERCENT) }
          : {}),
        providerLimits: {
          limits: config.MODEL_LIMITS,
          guardMs: config.MODEL_LIMIT_GUARD_MS,
          concurrentRetryMs: config.MODEL_LIMIT_RETRY_MS,
        },
        modelPrices: config.MODEL_PRICES,
        tenantCaps: {
          cacheMs: config.TENANT_CAPS_CACHE_MS,
          defaultMaxOutputTokens: config.TENANT_CAP_MAX_OUTPUT_TOKENS,
        },
        localTools: config.LOCAL_TOOLS,
        shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
        schedules: {
          intervalMs: config.SCHEDULES_TICK_MS,
          graceMs: config.SCHEDULES_GRACE_MS,
          clockOffsetMs: config.RATCHET_TEST_CLOCK_OFFSET_MS,
        },
        housekeeping: config.HOUSEKEEPING_ENABLED
          ? { ...housekeeping, checkMs: config.HOUSEKEEPING_CHECK_MS }
          : undefined,
        webhooks: {
          allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
          maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
          baseDelayMs: config.WEBHOOK_BASE_DELAY_MS,
          timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        },
      });
    },
  });
});

/**
 * AGENTS_DIR's agents are the deployment's shared ones. One that lists a tool of the executor's
 * catalog (a remote service, an MCP server) waits for the executor to answer, a bounded time.
 */
async function registerAtStart(catalog: AgentCatalog, dir: string, waitMs: number) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await catalog.registerDirectory(dir);
    } catch (error) {
      if (!(error instanceof TransientError) || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * The tenant is the subject's token at `tenantToken`: the third of `<prefix>.requests.<tenant>` and
 * `<prefix>.inbox.<tenant>.<thread>`, the fourth of `<prefix>.cmd.model.<tenant>`.
 */
function tenantShare(concurrency: number, percent: number, tenantToken = 2): FairShareOptions {
  return {
    keyOf: (subject) => subject.split('.')[tenantToken],
    perKeyInFlight: shareOf(concurrency, percent),
  };
}

/** `percent` of `slots`, at least one. */
function shareOf(slots: number, percent: number): number {
  return Math.max(1, Math.ceil((slots * percent) / 100));
}
