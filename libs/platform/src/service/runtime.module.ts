import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController, MetricsController, Readiness } from './health.controller';
import { ServiceRuntime } from './service-runtime';

/** Makes the service runtime (database, NATS, relay, logger) injectable and serves the health probes. */
@Global()
@Module({})
export class RuntimeModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: RuntimeModule,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: ServiceRuntime, useValue: runtime },
        { provide: Readiness, useValue: new Readiness() },
      ],
      exports: [ServiceRuntime, Readiness],
    };
  }
}
