import { Module, type DynamicModule } from '@nestjs/common';
import { RuntimeModule, type ServiceRuntime } from '@ratchet/platform';
import { ExpirySweeper } from './expiry/expiry.sweeper';
import type { MemoryConfig } from './memory.config';
import { MemoryApi } from '@ratchet/requests';
import { MemoryResponder } from './requests/memory.responder';

@Module({})
export class MemoryModule {
  static create(runtime: ServiceRuntime, config: MemoryConfig): DynamicModule {
    const logger = runtime.logger.child({ component: 'memory' });
    return {
      module: MemoryModule,
      imports: [RuntimeModule.forRuntime(runtime)],
      providers: [
        {
          provide: MemoryApi,
          useFactory: () =>
            new MemoryApi(
              runtime.db,
              {
                limits: {
                  maxValueBytes: config.MEMORY_MAX_VALUE_BYTES,
                  maxTextBytes: config.MEMORY_MAX_TEXT_BYTES,
                  maxKeyBytes: config.MEMORY_MAX_KEY_BYTES,
                },
                retention: config.MEMORY_RETENTION,
              },
              runtime.logger,
            ),
        },
        MemoryResponder,
        {
          provide: ExpirySweeper,
          useFactory: () =>
            new ExpirySweeper(
              runtime.db,
              { intervalMs: config.MEMORY_SWEEP_INTERVAL_MS, batch: config.MEMORY_SWEEP_BATCH },
              logger,
            ),
        },
      ],
    };
  }
}
