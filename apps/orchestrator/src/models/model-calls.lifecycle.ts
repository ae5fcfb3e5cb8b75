import {
  Inject,
  Injectable,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { RunStops, ServiceRuntime } from '@ratchet/platform';
import { LocalModelDispatch } from './local-model-dispatch';
import { ModelCalls } from './model-calls';

/**
 * Starts the renewal of model-call leases and the run-stop listener with the app. On shutdown, lets the
 * model calls this process runs itself finish and commit while the connections are open (their leases
 * renewed meanwhile), then stops renewing.
 */
@Injectable()
export class ModelCallsLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(ModelCalls) private readonly calls: ModelCalls,
    @Inject(RunStops) private readonly stops: RunStops,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Optional() @Inject(LocalModelDispatch) private readonly local?: LocalModelDispatch,
  ) {}

  onApplicationBootstrap(): void {
    this.stops.start();
    this.calls.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.local && !(await this.local.drain()))
      // Their rows stay leased: once the lease runs out a sweeper sends them to the bus as retries.
      this.runtime.logger.warn({ running: this.local.active }, 'local model calls still running at shutdown');
    await this.calls.stop();
    this.stops.close();
  }
}
