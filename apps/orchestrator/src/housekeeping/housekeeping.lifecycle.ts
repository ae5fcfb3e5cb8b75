import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { HousekeepingTicker } from '@ratchet/jobs';

/** Starts the housekeeping ticker with the app and stops it (a tick in progress finishes) before the connections close. */
@Injectable()
export class HousekeepingLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(HousekeepingTicker) private readonly ticker: HousekeepingTicker) {}

  onApplicationBootstrap(): void {
    this.ticker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.ticker.stop();
  }
}
