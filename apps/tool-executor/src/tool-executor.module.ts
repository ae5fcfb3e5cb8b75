import {
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { MemoryClient } from '@ratchet/adapters';
import { RuntimeModule, ServiceRuntime } from '@ratchet/platform';
import { toolLogger, ToolCatalog, type DynamicToolSource } from '@ratchet/tools';
import { ToolsResponder } from './catalog/tools.responder';
import { ToolCallController } from './effects/tool-call.controller';
import { ToolCallHandler } from './effects/tool-call.handler';

export type StartableSource = DynamicToolSource & { start(): Promise<void>; stop(): void | Promise<void> };
const TOOL_SOURCES = Symbol('TOOL_SOURCES');

/** Starts the dynamic tool sources with the service (first look before it is ready) and stops them with it. */
@Injectable()
class ToolSourcesLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(TOOL_SOURCES) private readonly sources: readonly StartableSource[]) {}
  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(this.sources.map((s) => s.start()));
  }
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.sources.map((s) => s.stop()));
  }
}

@Module({})
export class ToolExecutorModule {
  static create(
    runtime: ServiceRuntime,
    catalog: ToolCatalog,
    sources: readonly StartableSource[] = [],
  ): DynamicModule {
    const logger = runtime.logger.child({ component: 'tools' });
    const memory = new MemoryClient(runtime.nc, { subjectPrefix: runtime.subjects.prefix });
    return {
      module: ToolExecutorModule,
      imports: [RuntimeModule.forRuntime(runtime)],
      controllers: [ToolCallController],
      providers: [
        { provide: ToolCatalog, useValue: catalog },
        { provide: TOOL_SOURCES, useValue: sources },
        ToolSourcesLifecycle,
        ToolsResponder,
        {
          provide: ToolCallHandler,
          useFactory: () =>
            new ToolCallHandler(runtime.db, catalog, runtime.relay, runtime.subjects, toolLogger(logger), {
              // Bound here to the call's tenant and principal: a tool cannot reach another tenant's memory.
              memoryFor: (tenantId, principal) => ({
                put: (request) => memory.put(tenantId, { ...request, principal }),
                search: (request) => memory.search(tenantId, { ...request, principal }),
              }),
            }),
        },
      ],
    };
  }
}
