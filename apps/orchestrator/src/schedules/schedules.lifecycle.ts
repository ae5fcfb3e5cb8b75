import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { ScheduleTicker } from '@ratchet/jobs';

/** Starts the schedule ticker with the app and stops it before the connections close. */
@Injectable()
export class SchedulesLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(ScheduleTicker) private readonly ticker: ScheduleTicker) {}

  onApplicationBootstrap(): void {
    this.ticker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.ticker.stop();
  }
}
