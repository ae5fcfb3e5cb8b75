import { Module, type DynamicModule } from '@nestjs/common';
import {
  AgentDefinitionsRepository,
  MemoryClient,
  ModelCallLeases,
  ModelLimitAdmissions,
  type LimitOptions,
  OpenAiCompatibleModel,
  PgThreadStore,
  ScriptedModel,
  TenantAgentSettingsRepository,
  TenantCapCounters,
  TenantCapsRepository,
  TenantSlotLimitsRepository,
} from '@ratchet/adapters';
import { CLOCK, randomIds, RunStops, RuntimeModule, ServiceRuntime, systemClock } from '@ratchet/platform';
import { BUILTIN_TOOLS, toolLogger, ToolRegistry } from '@ratchet/tools';
import { AgentCatalog, approvalEnrichers, CatalogTools, toolConfigsOf } from '@ratchet/agents';
import { ModelWorker } from './models/model-worker';
import { ModelWorkerController } from './models/model-worker.controller';
import { RUN_ADMISSION, RunRequestController, type RunAdmission } from './threads/run-request.controller';
import { ThreadInboxController } from './threads/thread-inbox.controller';
import { orchestratorEngineDeps } from './threads/engine-deps';
import { inboxToCommand } from './threads/to-command';
import { KeyedSerializer, ThreadCommandHandler, ThreadInbox } from '@ratchet/engine';
import { LocalModelDispatch } from './models/local-model-dispatch';
import { ModelCallsLifecycle } from './models/model-calls.lifecycle';
import { ModelCalls } from './models/model-calls';
import { ProviderLimits } from './models/provider-limits';
import { TenantCapsGate, type TenantCapsOptions } from './models/tenant-caps';
import type { ProviderLimitSpec } from './models/provider-limits.config';
import { TokenStream } from './models/token-stream';
import { LocalTools } from './threads/local-tools';
import { MemoryRecall, runPrincipalFromProjection } from './models/memory-recall';
import { AgentsResponder } from './agents/agents.responder';
import { ThreadsQueryResponder } from './queries/threads.responder';
import { WatchdogLifecycle } from './watchdog/watchdog.lifecycle';
import { AdmissionPassLifecycle } from './threads/admission-pass.lifecycle';
import { DEFAULT_WEBHOOK_RETRY, threadColumns, type PriceTable } from '@ratchet/domain';
import { RevocationCommandsController } from './revocations/revocation-commands.controller';
import { WebhookCommandsController } from './webhooks/webhook-commands.controller';
import { WebhooksLifecycle } from './webhooks/webhooks.lifecycle';
import { WebhooksResponder } from './webhooks/webhooks.responder';
import { SchedulesLifecycle } from './schedules/schedules.lifecycle';
import { SCHEDULE_CLOCK, SchedulesResponder, WEBHOOK_POLICY } from './schedules/schedules.responder';
import {
  HousekeepingTicker,
  offsetClock,
  ScheduleTicker,
  Watchdog,
  AdmissionPass,
  WebhookSender,
  type HousekeepingTickerOptions,
} from '@ratchet/jobs';
import { HousekeepingLifecycle } from './housekeeping/housekeeping.lifecycle';

@Module({})
export class OrchestratorModule {
  static create(
    runtime: ServiceRuntime,
    catalog: AgentCatalog,
    tools: ToolRegistry,
    catalogTools: CatalogTools,
    options: {
      modelWorker: boolean;
      watchdog: { intervalMs: number; minIdleMs: number; lostAfterMs: number; batch?: number };
      groupCommitMax?: number;
      /** Run committed model calls in this process (needs the model worker); at most this many at once. */
      localModelCalls?: number;
      /** Of those, at most this many for one tenant (its share); its further calls go to the bus. */
      localModelCallsPerTenant?: number;
      /** Provider limits shared by every orchestrator (docs/flow-control.md); none when absent or empty. */
      providerLimits?: { limits: readonly ProviderLimitSpec[] } & LimitOptions;
      /** Tenants' token caps (docs/flow-control.md#token-and-cost-caps); default: caps read every second, 4096-token answers. */
      tenantCaps?: Omit<TenantCapsOptions, 'now' | 'prices'>;
      /** Prices per model (MODEL_PRICES): each answer's cost is recorded with its usage. */
      modelPrices?: PriceTable;
      /** Run `local` tools inside the decision that calls them (ADR 0010). */
      localTools?: boolean;
      /** How long a graceful stop waits for local model calls. */
      shutdownGraceMs?: number;
      /** The schedule ticker (intervalMs 0: off in this process). */
      schedules?: { intervalMs: number; graceMs: number; clockOffsetMs?: number };
      /** Which webhook addresses may be called. */
      webhooks?: { allowPrivate: boolean; maxAttempts?: number; baseDelayMs?: number; timeoutMs?: number };
      /** The bound on one tenant's runs in flight (TENANT_MAX_ACTIVE_RUNS); none when undefined. */
      runAdmission?: RunAdmission;
      /** Built-in housekeeping (docs/runbooks/retention.md); undefined: off in this process. */
      housekeeping?: Pick<HousekeepingTickerOptions, 'settings' | 'retention' | 'checkMs'> | undefined;
    },
  ): DynamicModule {
    const modelWorker = options.modelWorker;
    const admission: RunAdmission = options.runAdmission ?? { maxActiveRuns: 0, maxWaitingRuns: 0 };
    const serializer = new KeyedSerializer();
    const conversations = new PgThreadStore(runtime.db, threadColumns);
    const worker = new ModelWorker(
      catalog,
      catalogTools,
      {
        scripted: new ScriptedModel(),
        openai: new OpenAiCompatibleModel({
          // API keys are read from the variable each agent names (`model.apiKeyEnv`), i.e. a mounted secret.
          resolveSecret: (name) => process.env[name],
          // One attempt is one request: every retry is the decider's (durable, in the log, with backoff, and
          // bounded by the run's attempts), and each attempt ends by the agent's stepTimeoutSeconds.
          maxRetries: 0,
          timeoutMs: PROVIDER_REQUEST_BACKSTOP_MS,
        }),
      },
      async (tenantId, threadId, count) => (await conversations.readMessages(tenantId, threadId)).slice(0, count),
      new TokenStream(runtime.nc, runtime.subjects),
      options.providerLimits && options.providerLimits.limits.length > 0
        ? new ProviderLimits(
            options.providerLimits.limits,
            new ModelLimitAdmissions(runtime.db, options.providerLimits),
            runtime.logger.child({ component: 'provider-limits' }),
          )
        : undefined,
      new TenantCapsGate(
        new TenantCapsRepository(runtime.db.sql),
        new TenantCapCounters(runtime.db),
        {
          ...(options.tenantCaps ?? { cacheMs: 1000, defaultMaxOutputTokens: 4096 }),
          prices: options.modelPrices ?? {},
          now: () => systemClock.now().getTime(),
        },
        runtime.logger.child({ component: 'tenant-caps' }),
      ),
      options.modelPrices,
    );
    const stops = new RunStops(runtime.nc, runtime.subjects, runtime.logger.child({ component: 'run-stops' }));
    // As long as a bus worker's ack wait: a crash mid-call is retried after the same delay either way.
    const calls = new ModelCalls(
      new ModelCallLeases(runtime.db.sql),
      stops,
      runtime.config.SERVICE_INSTANCE_ID,
      runtime.config.RATCHET_ACK_WAIT_MS,
      runtime.logger.child({ component: 'model-calls' }),
    );
    // A short wait: a memory service that does not answer delays the model call by at most this, then
    // the call goes ahead without recall.
    const recall = new MemoryRecall(
      new MemoryClient(runtime.nc, { subjectPrefix: runtime.subjects.prefix, timeoutMs: RECALL_TIMEOUT_MS }),
      runPrincipalFromProjection(runtime.db.sql),
      runtime.logger.child({ component: 'memory-recall' }),
    );
    const local =
      modelWorker && (options.localModelCalls ?? 0) > 0
        ? new LocalModelDispatch(
            runtime.relay,
            worker,
            calls,
            recall,
            runtime.logger.child({ component: 'model-local' }),
            {
              maxInFlight: options.localModelCalls ?? 0,
              ...(options.localModelCallsPerTenant !== undefined
                ? { perTenant: options.localModelCallsPerTenant }
                : {}),
              drainMs: options.shutdownGraceMs ?? 10_000,
            },
          )
        : undefined;
    const handler = new ThreadCommandHandler(
      orchestratorEngineDeps({
        store: new PgThreadStore(runtime.db, threadColumns),
        relay: local ?? runtime.relay,
        // Published rows are marked sent by the next decision's commit (one statement fewer per commit).
        marks: runtime.relay,
        subjects: runtime.subjects,
        enrich: approvalEnrichers(catalog, runtime),
        toolConfigs: toolConfigsOf(catalog),
        group: { maxBatch: options.groupCommitMax ?? 32 },
        leaseOf: local ? (m) => local.leaseOf(m) : undefined,
        localTools: options.localTools
          ? new LocalTools(tools, toolLogger(runtime.logger.child({ component: 'local-tools' })))
          : undefined,
        ids: randomIds,
      }),
    );
    const inbox = new ThreadInbox({
      threads: handler,
      serializer,
      logger: runtime.logger,
      worker: runtime.config.SERVICE_INSTANCE_ID,
      clock: systemClock,
      toCommand: inboxToCommand,
    });
    local?.deliverTo(inbox);
    const webhookOptions = options.webhooks ?? { allowPrivate: false };
    const schedules = options.schedules ?? { intervalMs: 1000, graceMs: 60_000 };
    const clock = offsetClock(schedules.clockOffsetMs ?? 0);
    const ticker = new ScheduleTicker(
      runtime.db,
      runtime.relay,
      runtime.subjects,
      clock,
      runtime.logger.child({ component: 'schedules' }),
      {
        intervalMs: schedules.intervalMs,
        graceMs: schedules.graceMs,
        batch: 50,
        worker: runtime.config.SERVICE_INSTANCE_ID,
      },
    );
    return {
      module: OrchestratorModule,
      imports: [RuntimeModule.forRuntime(runtime)],
      controllers: [
        RunRequestController,
        ThreadInboxController,
        WebhookCommandsController,
        RevocationCommandsController,
        ...(modelWorker ? [ModelWorkerController] : []),
      ],
      providers: [
        { provide: CLOCK, useValue: systemClock },
        { provide: RUN_ADMISSION, useValue: admission },
        { provide: AgentCatalog, useValue: catalog },
        { provide: TenantSlotLimitsRepository, useValue: new TenantSlotLimitsRepository(runtime.db.sql) },
        { provide: TenantAgentSettingsRepository, useValue: new TenantAgentSettingsRepository(runtime.db.sql) },
        { provide: KeyedSerializer, useValue: serializer },
        { provide: ThreadInbox, useValue: inbox },
        { provide: MemoryRecall, useValue: recall },
        { provide: RunStops, useValue: stops },
        { provide: ModelCalls, useValue: calls },
        ...(local ? [{ provide: LocalModelDispatch, useValue: local }] : []),
        ModelCallsLifecycle,
        { provide: ToolRegistry, useValue: tools },
        { provide: ThreadCommandHandler, useValue: handler },
        {
          provide: Watchdog,
          inject: [ThreadCommandHandler],
          useFactory: (handler: ThreadCommandHandler) =>
            new Watchdog(runtime.db, handler, catalog, runtime.logger.child({ component: 'watchdog' }), {
              ...options.watchdog,
              batch: options.watchdog.batch ?? 100,
              worker: runtime.config.SERVICE_INSTANCE_ID,
            }),
        },
        WatchdogLifecycle,
        // Always on: runs past a concurrency key's max wait for it, whatever TENANT_RUNS_OVER_BOUND says.
        {
          provide: AdmissionPass,
          inject: [ThreadCommandHandler],
          useFactory: (handler: ThreadCommandHandler) =>
            new AdmissionPass(runtime.db, handler, systemClock, runtime.logger.child({ component: 'admission' }), {
              intervalMs: admission.passMs ?? 500,
              maxActiveRuns: admission.maxActiveRuns,
              batch: 100,
            }),
        },
        AdmissionPassLifecycle,
        { provide: ScheduleTicker, useValue: ticker },
        { provide: SCHEDULE_CLOCK, useValue: clock },
        { provide: WEBHOOK_POLICY, useValue: { allowPrivate: webhookOptions.allowPrivate } },
        {
          provide: WebhookSender,
          useValue: new WebhookSender(runtime.db, clock, runtime.logger.child({ component: 'webhooks' }), {
            intervalMs: 250,
            timeoutMs: webhookOptions.timeoutMs ?? 10_000,
            retry: {
              ...DEFAULT_WEBHOOK_RETRY,
              ...(webhookOptions.maxAttempts ? { maxAttempts: webhookOptions.maxAttempts } : {}),
              ...(webhookOptions.baseDelayMs !== undefined ? { baseDelayMs: webhookOptions.baseDelayMs } : {}),
            },
            allowPrivate: webhookOptions.allowPrivate,
            batch: 64,
          }),
        },
        WebhooksLifecycle,
        WebhooksResponder,
        ...(schedules.intervalMs > 0 ? [SchedulesLifecycle] : []),
        ...(options.housekeeping
          ? [
              {
                provide: HousekeepingTicker,
                useValue: new HousekeepingTicker(
                  runtime.db,
                  runtime.nc,
                  clock,
                  runtime.logger.child({ component: 'housekeeping' }),
                  { ...options.housekeeping, worker: runtime.config.SERVICE_INSTANCE_ID, topology: runtime.config },
                ),
              },
              HousekeepingLifecycle,
            ]
          : []),
        SchedulesResponder,
        AgentsResponder,
        ThreadsQueryResponder,
        { provide: ModelWorker, useValue: worker },
      ],
    };
  }
}

/**
 * The provider client's own deadline per request: only a backstop (a stuck socket), far beyond any
 * attempt; the agent's stepTimeoutSeconds ends an attempt first.
 */
const PROVIDER_REQUEST_BACKSTOP_MS = 60 * 60_000;

/** How long a recall waits for the memory service before the model is called without it. */
export const RECALL_TIMEOUT_MS = 2000;

export function createCatalog(
  runtime: ServiceRuntime,
  tools: ToolRegistry,
): { catalog: AgentCatalog; catalogTools: CatalogTools } {
  const catalogTools = new CatalogTools(
    tools,
    runtime.nc,
    runtime.subjects,
    toolLogger(runtime.logger.child({ component: 'tool-catalog' })),
  );
  return { catalog: new AgentCatalog(new AgentDefinitionsRepository(runtime.db.sql), catalogTools), catalogTools };
}

export { BUILTIN_TOOLS };
