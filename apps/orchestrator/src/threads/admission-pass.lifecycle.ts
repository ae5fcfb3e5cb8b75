import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { AdmissionPass } from '@ratchet/jobs';

/** Starts the admission pass (TENANT_RUNS_OVER_BOUND=queue) with the app and stops it before the connections close. */
@Injectable()
export class AdmissionPassLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(AdmissionPass) private readonly pass: AdmissionPass) {}

  onApplicationBootstrap(): void {
    this.pass.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.pass.stop();
  }
}
