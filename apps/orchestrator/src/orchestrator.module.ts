import { Module, type DynamicModule } from '@nestjs/common';
import { AgentDefinitionsRepository, OpenAiCompatibleModel, PgThreadStore, ScriptedModel } from '@ratchet/adapters';
import { RuntimeModule, ServiceRuntime } from '@ratchet/platform';
import { BUILTIN_TOOLS, ToolRegistry } from '@ratchet/tools';
import { AgentCatalog } from './agents/agent-catalog';
import { ModelWorker } from './models/model-worker';
import { ModelWorkerController } from './models/model-worker.controller';
import { RunRequestController } from './threads/run-request.controller';
import { ThreadCommandHandler, threadColumns } from './threads/thread-command.handler';
import { ThreadInboxController } from './threads/thread-inbox.controller';
import { KeyedSerializer } from './threads/keyed-serializer';
import { Watchdog } from './watchdog/watchdog';
import { approvalEnrichers } from './approvals/approval-enrichers';
import { AgentsResponder } from './agents/agents.responder';
import { toolConfigsOf } from './agents/tool-configs';
import { ThreadsQueryResponder } from './queries/threads.responder';
import { WatchdogLifecycle } from './watchdog/watchdog.lifecycle';

@Module({})
export class OrchestratorModule {
  static create(
    runtime: ServiceRuntime,
    catalog: AgentCatalog,
    tools: ToolRegistry,
    options: { modelWorker: boolean; watchdog: { intervalMs: number; minIdleMs: number }; groupCommitMax?: number },
  ): DynamicModule {
    const modelWorker = options.modelWorker;
    return {
      module: OrchestratorModule,
      imports: [RuntimeModule.forRuntime(runtime)],
      controllers: [RunRequestController, ThreadInboxController, ...(modelWorker ? [ModelWorkerController] : [])],
      providers: [
        { provide: AgentCatalog, useValue: catalog },
        { provide: KeyedSerializer, useValue: new KeyedSerializer() },
        { provide: ToolRegistry, useValue: tools },
        {
          provide: ThreadCommandHandler,
          useFactory: () =>
            new ThreadCommandHandler(
              new PgThreadStore(runtime.db, threadColumns),
              runtime.relay,
              runtime.subjects,
              approvalEnrichers(catalog, runtime),
              toolConfigsOf(catalog),
              { maxBatch: options.groupCommitMax ?? 32 },
            ),
        },
        {
          provide: Watchdog,
          inject: [ThreadCommandHandler],
          useFactory: (handler: ThreadCommandHandler) =>
            new Watchdog(runtime.db, handler, catalog, runtime.logger.child({ component: 'watchdog' }), {
              ...options.watchdog,
              batch: 100,
              worker: runtime.config.SERVICE_INSTANCE_ID,
            }),
        },
        WatchdogLifecycle,
        AgentsResponder,
        ThreadsQueryResponder,
        {
          provide: ModelWorker,
          // API keys are read from the variable each agent names (`model.apiKeyEnv`), i.e. a mounted secret.
          useFactory: () =>
            new ModelWorker(catalog, tools, {
              scripted: new ScriptedModel(),
              openai: new OpenAiCompatibleModel({ resolveSecret: (name) => process.env[name] }),
            }),
        },
      ],
    };
  }
}

export function createCatalog(runtime: ServiceRuntime, tools: ToolRegistry): AgentCatalog {
  return new AgentCatalog(new AgentDefinitionsRepository(runtime.db.sql), tools);
}

export { BUILTIN_TOOLS };
