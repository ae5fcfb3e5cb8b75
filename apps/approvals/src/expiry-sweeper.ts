import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { ServiceRuntime } from '@ratchet/platform';
import { ApprovalsService } from './approvals.service';

export const SWEEP_INTERVAL = Symbol('SWEEP_INTERVAL');

/**
 * Expires pending approvals past their deadline: records the expiry (decision, audit) and sends
 * `approval.decision` expired to the thread, in one transaction per batch. The deadline is in Postgres,
 * so a restart loses nothing: the next tick after start catches up.
 */
@Injectable()
export class ExpirySweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    @Inject(ApprovalsService) private readonly approvals: ApprovalsService,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(SWEEP_INTERVAL) private readonly intervalMs: number,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async sweep(): Promise<void> {
    try {
      for (let batch = 0; batch < 20; batch++) {
        const n = await this.approvals.expireDue(50);
        if (n > 0) this.runtime.logger.info({ expired: n }, 'approvals expired');
        if (n < 50) return;
      }
    } catch (error) {
      this.runtime.logger.warn({ err: error }, 'expiry sweep failed; retrying on the next tick');
    }
  }
}
