import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { ServiceRuntime } from '@ratchet/platform';
import { LocalModelDispatch } from './local-model-dispatch';

/** On shutdown, lets the model calls this process runs itself finish and commit while the connections are open. */
@Injectable()
export class LocalModelLifecycle implements BeforeApplicationShutdown {
  constructor(
    @Inject(LocalModelDispatch) private readonly local: LocalModelDispatch,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  async beforeApplicationShutdown(): Promise<void> {
    if (!(await this.local.drain()))
      // Their rows stay leased: once the lease runs out a sweeper sends them to the bus as retries.
      this.runtime.logger.warn({ running: this.local.active }, 'local model calls still running at shutdown');
  }
}
