import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { Watchdog } from '@ratchet/jobs';

/** Starts the watchdog with the app and stops it before the connections close. */
@Injectable()
export class WatchdogLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(Watchdog) private readonly watchdog: Watchdog) {}

  onApplicationBootstrap(): void {
    this.watchdog.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.watchdog.stop();
  }
}
