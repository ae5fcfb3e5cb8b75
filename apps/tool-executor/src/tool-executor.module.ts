import {
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { EffectLedgerRepository, MemoryClient } from '@ratchet/adapters';
import { randomIds, RunStops, RuntimeModule, ServiceRuntime, systemClock } from '@ratchet/platform';
import { toolLogger, ToolCatalog, type DynamicToolSource } from '@ratchet/tools';
import { ToolsResponder } from './catalog/tools.responder';
import { ControlGate } from './effects/control-gate';
import { EffectLeases } from './effects/effect-leases';
import { CONTROL_CONSUMER, RunStopController } from './effects/run-stop.controller';
import { abandonedAttemptsCounter, ToolCallController } from './effects/tool-call.controller';
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

/** Starts listening for run stops and renewing effect leases with the app; stops both after the drain. */
@Injectable()
class RunControlLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(RunStops) private readonly stops: RunStops,
    @Inject(EffectLeases) private readonly leases: EffectLeases,
    @Inject(ControlGate) private readonly gate: ControlGate,
  ) {}

  onApplicationBootstrap(): void {
    this.stops.start();
    this.leases.start();
    void this.gate.watch();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.leases.stop();
    this.stops.close();
  }
}

@Module({})
export class ToolExecutorModule {
  static create(
    runtime: ServiceRuntime,
    catalog: ToolCatalog,
    sources: readonly StartableSource[] = [],
    options: { abortGraceMs?: number; claimAfterMs?: number | undefined } = {},
  ): DynamicModule {
    const logger = runtime.logger.child({ component: 'tools' });
    const memory = new MemoryClient(runtime.nc, { subjectPrefix: runtime.subjects.prefix });
    const stops = new RunStops(runtime.nc, runtime.subjects, runtime.logger.child({ component: 'run-stops' }));
    // As long as the bus's ack wait: an executor that died mid-call is noticed after the same delay either way.
    const leases = new EffectLeases(
      new EffectLedgerRepository(runtime.db.sql),
      { holder: runtime.config.SERVICE_INSTANCE_ID, leaseMs: runtime.config.RATCHET_ACK_WAIT_MS },
      logger,
    );
    const commands = runtime.topology.streams.find((st) => st.role === 'commands')!.config.name;
    const gate = new ControlGate(() => runtime.nc.jetstreamManager(), commands, CONTROL_CONSUMER, logger);
    return {
      module: ToolExecutorModule,
      imports: [RuntimeModule.forRuntime(runtime)],
      controllers: [ToolCallController, RunStopController],
      providers: [
        { provide: ToolCatalog, useValue: catalog },
        { provide: TOOL_SOURCES, useValue: sources },
        ToolSourcesLifecycle,
        ToolsResponder,
        { provide: RunStops, useValue: stops },
        { provide: EffectLeases, useValue: leases },
        { provide: ControlGate, useValue: gate },
        RunControlLifecycle,
        {
          provide: ToolCallHandler,
          useFactory: () =>
            new ToolCallHandler(
              runtime.db,
              catalog,
              runtime.relay,
              runtime.subjects,
              toolLogger(logger),
              {
                ...(options.abortGraceMs !== undefined ? { abortGraceMs: options.abortGraceMs } : {}),
                onAbandoned: (tool) => abandonedAttemptsCounter().add(1, { tool }),
                // Bound here to the call's tenant and principal: a tool cannot reach another tenant's memory.
                memoryFor: (tenantId, principal) => ({
                  put: (request) => memory.put(tenantId, { ...request, principal }),
                  search: (request) => memory.search(tenantId, { ...request, principal }),
                }),
              },
              {
                stops,
                leases,
                ready: gate.ready,
                ...(options.claimAfterMs !== undefined ? { claimAfterMs: options.claimAfterMs } : {}),
              },
              { clock: systemClock, ids: randomIds },
              // Published results are marked sent by the next outcome's statement (one statement fewer).
              runtime.relay,
            ),
        },
      ],
    };
  }
}
