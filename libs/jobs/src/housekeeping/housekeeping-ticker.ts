import type { NatsConnection } from 'nats';
import {
  claimHousekeepingJob,
  ensureHousekeepingJob,
  pruneFailedMessages,
  pruneIdempotencyKeys,
  pruneInboxes,
  pruneScheduleTicks,
  pruneWebhookDeliveries,
  recordHousekeeping,
  withServiceTx,
  type Database,
} from '@ratchet/adapters';
import {
  decideHousekeeping,
  type HousekeepingDecision,
  type HousekeepingSettings,
  type HousekeepingTask,
} from '@ratchet/domain';
import { applyRetention, type Logger, type RetentionPolicy, type TopologySettings } from '@ratchet/platform';
import type { Clock } from '../clock';
import { PeriodicPass } from '../periodic-pass';

/** The one built-in job (more could share the table). */
export const HOUSEKEEPING_JOB = 'housekeeping';

export interface HousekeepingTickerOptions {
  settings: HousekeepingSettings;
  /** The thread retention policy (RATCHET_RETENTION); undefined: threads are kept. */
  retention: RetentionPolicy | undefined;
  /** How often this process looks whether a tick is due (it asks the database only once one is). */
  checkMs: number;
  /** Recorded with each tick (which process ran it). */
  worker: string;
  topology: TopologySettings;
}

/**
 * Runs the deployment's housekeeping (retention and pruning, docs/runbooks/retention.md) on its
 * schedule, once per tick however many orchestrators run. A tick is run while holding the job's row
 * (`for update skip locked`, the claim schedule ticks use): the others skip it meanwhile, and the
 * cursor moves in the commit that records the tick, so once it is recorded no one runs it again. The
 * tasks commit on their own as they go (each prune in batches, each thread of the retention pass in
 * its own transaction); a process that dies mid-tick leaves the cursor where it was, and the next
 * orchestrator runs the tick again, which is safe: every task removes by age, and what is gone stays gone.
 */
export class HousekeepingTicker {
  private readonly loop: PeriodicPass;
  /** When this process next asks the database (a tick is due then); undefined: at the next check. */
  private nextDueAt: number | undefined;
  private stopping = false;

  constructor(
    private readonly db: Database,
    private readonly nc: NatsConnection,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: HousekeepingTickerOptions,
  ) {
    this.loop = new PeriodicPass(
      options.checkMs,
      () => this.pass(),
      (error) =>
        error instanceof HousekeepingInterruptedError
          ? this.logger.info({ tickAt: error.tickAt }, error.message)
          : this.logger.warn({ err: error }, 'housekeeping failed; the next check retries'),
      () => this.nextDueAt === undefined || this.clock.now().getTime() >= this.nextDueAt,
    );
  }

  start(): void {
    this.loop.start();
  }

  /** Stops checking; a tick in progress stops after its current task, unrecorded (the next process reruns it). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
  }

  /**
   * Claims the job, runs the due tick if there is one, records it; resolves with the decision, or
   * undefined when another orchestrator holds the job.
   */
  async pass(): Promise<HousekeepingDecision | undefined> {
    await ensureHousekeepingJob(this.db.sql, HOUSEKEEPING_JOB, this.clock.now().toISOString());
    const decision = await withServiceTx(this.db, async (tx) => {
      const job = await claimHousekeepingJob(tx, HOUSEKEEPING_JOB);
      if (!job) return undefined;
      const startedAt = this.clock.now().toISOString();
      const d = decideHousekeeping(this.options.settings, { decidedThrough: job.decidedThrough, now: startedAt });
      if (!d.tick) {
        await recordHousekeeping(tx, HOUSEKEEPING_JOB, d.decidedThrough, undefined);
        return d;
      }
      this.logger.info({ tickAt: d.tick.at, missed: d.missed }, 'housekeeping tick started');
      const report: Record<string, unknown> = {};
      for (const task of d.tick.tasks) {
        // Rolls the claim back: the cursor stays, and the next orchestrator runs the tick (again).
        if (this.stopping) throw new HousekeepingInterruptedError(d.tick.at);
        report[task.kind] = await this.run(task);
      }
      const finishedAt = this.clock.now().toISOString();
      await recordHousekeeping(tx, HOUSEKEEPING_JOB, d.decidedThrough, {
        tickAt: d.tick.at,
        missed: d.missed,
        startedAt,
        finishedAt,
        decidedBy: this.options.worker,
        report,
      });
      this.logger.info({ tickAt: d.tick.at, missed: d.missed, report }, 'housekeeping tick done');
      return d;
    });
    // Another process holds the job: look again at the next check. Else sleep until the next tick.
    this.nextDueAt = decision?.nextDueAt ? Date.parse(decision.nextDueAt) : undefined;
    return decision;
  }

  /** One task; its counts (what it removed) for the tick's report. */
  private async run(task: HousekeepingTask): Promise<unknown> {
    switch (task.kind) {
      case 'threads': {
        if (!this.options.retention) return { skipped: 'no RATCHET_RETENTION policy' };
        const { results, failures } = await applyRetention(this.db, this.nc, this.options.topology, {
          policy: this.options.retention,
          now: new Date(task.now),
          dryRun: false,
        });
        for (const f of failures) this.logger.warn({ thread: f }, 'housekeeping: a thread was not handled');
        const n = (o: string) => results.filter((r) => r.outcome === o).length;
        return { compacted: n('compacted'), dropped: n('dropped'), skipped: n('skipped'), failed: failures.length };
      }
      case 'inbox':
        return pruneInboxes(this.db.sql, task.before);
      case 'failed-messages':
        return pruneFailedMessages(this.db.sql, task.before);
      case 'webhook-deliveries':
        return { deleted: await pruneWebhookDeliveries(this.db.sql, task.before) };
      case 'schedule-ticks':
        return { deleted: await pruneScheduleTicks(this.db.sql, task.before) };
      case 'idempotency-keys':
        return { deleted: await pruneIdempotencyKeys(this.db.sql, task.before) };
      default: {
        const _exhaustive: never = task;
        return _exhaustive;
      }
    }
  }
}

/** A tick left unrecorded because the process is stopping; transient: another orchestrator runs it. */
export class HousekeepingInterruptedError extends Error {
  readonly code = 'housekeeping.interrupted';
  readonly retry = 'transient';
  constructor(readonly tickAt: string) {
    super(`housekeeping tick ${tickAt} interrupted by shutdown; the next orchestrator runs it`);
    this.name = 'HousekeepingInterruptedError';
  }
}
