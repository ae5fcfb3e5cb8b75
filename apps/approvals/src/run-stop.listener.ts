import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from 'nats';
import { InFlight, readRunStop, ServiceRuntime } from '@ratchet/platform';
import { ApprovalsService } from './approvals.service';

/**
 * Closes the pending approvals of a run as soon as it stops: the orchestrator broadcasts `run.stop`
 * (core NATS, `<prefix>.stop.<tenant>.<thread>`) after committing a run's end (cancelled, interrupted,
 * out of time). A notice whose subject is not its tenant's is ignored.
 */
@Injectable()
export class RunStopListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private subscription: Subscription | undefined;
  private readonly inFlight = new InFlight();

  constructor(
    @Inject(ApprovalsService) private readonly approvals: ApprovalsService,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  onApplicationBootstrap(): void {
    const { nc, subjects, logger } = this.runtime;
    this.subscription = nc.subscribe(subjects.runStopsAll, {
      callback: (error, msg) => {
        if (error) return;
        const notice = readRunStop(subjects, msg, logger);
        if (!notice) return;
        const work = this.approvals
          .closeStoppedRun(notice)
          .then((closed) => {
            if (closed > 0)
              logger.info({ tenantId: notice.tenantId, runId: notice.runId, closed }, 'approvals closed: run stopped');
          })
          .catch((err: unknown) =>
            logger.warn(
              { err, tenantId: notice.tenantId, runId: notice.runId },
              'closing a stopped run’s approvals failed',
            ),
          );
        this.inFlight.add(work);
      },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscription?.unsubscribe();
    await this.inFlight.settled();
  }
}
