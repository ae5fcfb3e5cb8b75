import { Module, type DynamicModule } from '@nestjs/common';
import { MemoryClient } from '@ratchet/adapters';
import { RuntimeModule, ServiceRuntime } from '@ratchet/platform';
import { toolLogger, type ToolRegistry } from '@ratchet/tools';
import { ToolCallController } from './effects/tool-call.controller';
import { ToolCallHandler } from './effects/tool-call.handler';

@Module({})
export class ToolExecutorModule {
  static create(runtime: ServiceRuntime, tools: ToolRegistry): DynamicModule {
    const logger = runtime.logger.child({ component: 'tools' });
    const memory = new MemoryClient(runtime.nc, { subjectPrefix: runtime.subjects.prefix });
    return {
      module: ToolExecutorModule,
      imports: [RuntimeModule.forRuntime(runtime)],
      controllers: [ToolCallController],
      providers: [
        {
          provide: ToolCallHandler,
          useFactory: () =>
            new ToolCallHandler(runtime.db, tools, runtime.relay, runtime.subjects, toolLogger(logger), {
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
