import { activeRuns, claimDueSchedules, recordTickDecision, withServiceTx, type Database } from '@ratchet/adapters';
import type { Subjects } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/contracts';
import { decideTicks, InvalidTimingError, type OutboxMessage, type ScheduleDecision } from '@ratchet/domain';
import type { Logger, OutboxRelay } from '@ratchet/platform';
import type { Clock } from '../clock';
import { PeriodicPass } from '../periodic-pass';
import { tickMessages } from './tick-messages';

export interface ScheduleTickerOptions {
  /** How often the ticker looks for due schedules. */
  intervalMs: number;
  /** A tick at most this late is on time; later ones follow the schedule's catch-up policy. */
  graceMs: number;
  /** Schedules decided per transaction. */
  batch: number;
  /** Recorded with each tick (which process decided it). */
  worker: string;
}

/**
 * Starts the runs of due schedule ticks. Each pass claims due schedules with `for update skip locked`,
 * decides their ticks (`decideTicks`), and commits the tick records, the schedules' new cursors and
 * the run requests (outbox rows) in one transaction; the rows are published after the commit. Any
 * number of orchestrators run it: a schedule is decided by one at a time, a tick once (the cursor
 * moves in the same commit), and a tick whose request was committed but not yet published when its
 * process died is published by any relay's sweeper. A process that dies before the commit leaves the
 * schedule due for the next ticker.
 */
export class ScheduleTicker {
  private readonly loop: PeriodicPass;

  constructor(
    private readonly db: Database,
    private readonly relay: Pick<OutboxRelay, 'publishCommitted'>,
    private readonly subjects: Subjects,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ScheduleTickerOptions,
  ) {
    this.loop = new PeriodicPass(
      options.intervalMs,
      () => this.pass(),
      (error) => this.logger.warn({ err: error }, 'schedule tick failed; the next pass retries'),
    );
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Decides every due schedule (batch after batch); resolves with how many schedules were decided. */
  async pass(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.tick();
      total += n;
      if (n < this.options.batch) return total;
    }
  }

  /** One transaction: claim a batch of due schedules, decide, commit, publish. */
  async tick(): Promise<number> {
    const now = this.clock.now().toISOString();
    const messages: OutboxMessage[] = [];
    const claimed = await withServiceTx(this.db, async (tx) => {
      const due = await claimDueSchedules(tx, now, this.options.batch);
      for (const stored of due) {
        const s = stored.schedule;
        const last =
          stored.lastRunId && stored.lastThreadId
            ? { runId: stored.lastRunId, threadId: stored.lastThreadId }
            : undefined;
        const active = last && (await activeRuns(tx, s.tenantId, [last.runId])).has(last.runId) ? last : undefined;
        let decision: ScheduleDecision;
        try {
          decision = decideTicks(s, {
            decidedThrough: stored.decidedThrough,
            now,
            activeRun: active,
            graceMs: this.options.graceMs,
          });
        } catch (error) {
          if (!(error instanceof InvalidTimingError)) throw error;
          // Validated when written; a time zone the runtime no longer knows stops the schedule, visibly.
          this.logger.error(
            { err: error, tenantId: s.tenantId, scheduleId: s.id },
            'schedule timing invalid; not due again',
          );
          decision = { ticks: [], missedSkipped: 0, decidedThrough: now, nextDueAt: null };
        }
        const rows = tickMessages(s.tenantId, s.id, decision, this.subjects);
        await tx.enqueue(rows);
        messages.push(...rows);
        const lastStarted = [...decision.ticks].reverse().find((t) => t.action === 'start');
        const newLast =
          lastStarted?.action === 'start'
            ? {
                runId: runIdFor(s.tenantId, lastStarted.request.requestId),
                threadId: lastStarted.request.threadId ?? threadIdFor(s.tenantId, lastStarted.request.requestId),
              }
            : undefined;
        await recordTickDecision(tx, stored, decision, newLast, { at: now, by: this.options.worker });
        if (decision.ticks.length > 0 || decision.missedSkipped > 0)
          this.logger.info(
            {
              tenantId: s.tenantId,
              scheduleId: s.id,
              started: decision.ticks.filter((t) => t.action === 'start').length,
              skipped: decision.ticks.filter((t) => t.action === 'skip').length,
              missedSkipped: decision.missedSkipped,
            },
            'schedule ticks decided',
          );
      }
      return due.length;
    });
    if (messages.length > 0) await this.relay.publishCommitted(messages);
    return claimed;
  }
}
