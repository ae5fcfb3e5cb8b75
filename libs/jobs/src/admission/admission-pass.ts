import { admissionCandidates, type Database } from '@ratchet/adapters';
import type { AdmitRun } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import type { Clock } from '../clock';
import { PeriodicPass } from '../periodic-pass';
import type { WatchdogThreads } from '../watchdog/watchdog';

export interface AdmissionPassOptions {
  intervalMs: number;
  /** The tenant's bound on runs in flight (TENANT_MAX_ACTIVE_RUNS). */
  maxActiveRuns: number;
  /** The most admissions one pass asks for. */
  batch: number;
}

/**
 * Starts runs held for admission (TENANT_RUNS_OVER_BOUND=queue, ADR 0045): every beat it reads the held
 * runs each tenant has room for (one per thread, oldest first) and asks each thread to admit its next
 * held run, through the same handler as every other message. The pass is advice: the admission counts the
 * tenant's runs in flight again under the tenant's lock, so passes on any number of orchestrators, a pass
 * racing a new request, or a stale read never start one run past the bound. A run ended by a crash frees
 * its room like any other: nothing in the pass is kept in memory, so after a crash the next beat of any
 * orchestrator goes on. Each ask has a message id of its own (the beat's time): an ask that found no
 * room is not mistaken for a duplicate of the next.
 */
export class AdmissionPass {
  private readonly loop: PeriodicPass;

  constructor(
    private readonly db: Database,
    private readonly handler: WatchdogThreads,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: AdmissionPassOptions,
  ) {
    this.loop = new PeriodicPass(
      options.intervalMs,
      () => this.tick(),
      (error) => this.logger.warn({ err: error }, 'admission pass failed'),
    );
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One beat: the runs it started. */
  async tick(): Promise<number> {
    const candidates = await admissionCandidates(this.db.sql, this.options.maxActiveRuns, this.options.batch);
    if (candidates.length === 0) return 0;
    const at = this.clock.now().toISOString();
    let started = 0;
    for (const c of candidates) {
      const command: AdmitRun = {
        type: 'AdmitRun',
        tenantId: c.tenantId,
        threadId: c.threadId,
        at,
        runId: c.runId,
        activeRunLimit: this.options.maxActiveRuns,
      };
      const outcome = await this.handler.handle('admission', `admit:${c.tenantId}:${c.runId}@${at}`, command, {
        correlationId: c.runId,
      });
      if (outcome.status === 'applied') started++;
    }
    if (started > 0) this.logger.info({ started, asked: candidates.length }, 'admission pass started held runs');
    return started;
  }
}
