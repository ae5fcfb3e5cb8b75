import {
  admissionCandidates,
  expiredQueuedRuns,
  noteSlotTurns,
  pruneSlotTurns,
  supersededRuns,
  type Database,
} from '@ratchet/adapters';
import type { AdmitRun, ExpireQueuedRun } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import type { Clock } from '../clock';
import { PeriodicPass } from '../periodic-pass';
import type { WatchdogThreads } from '../watchdog/watchdog';

export interface AdmissionPassOptions {
  intervalMs: number;
  /** The tenant's bound on runs in flight (TENANT_MAX_ACTIVE_RUNS); 0: none. */
  maxActiveRuns: number;
  /** The most admissions one pass asks for. */
  batch: number;
}

/**
 * Starts runs held for admission (past a concurrency key's max or a throttle's limit, or the tenant's bound with
 * TENANT_RUNS_OVER_BOUND=queue; ADR 0045): every beat it reads the held runs there is room for (one per
 * thread, round-robin across keys) and asks each thread to admit its next held run, through the same
 * handler as every other message. The pass is advice: the admission counts the
 * tenant's runs in flight again under the tenant's lock, so passes on any number of orchestrators, a pass
 * racing a new request, or a stale read never start one run past the bound. A run ended by a crash frees
 * its room like any other: nothing in the pass is kept in memory, so after a crash the next beat of any
 * orchestrator goes on. Each ask has a message id of its own (the beat's time): an ask that found no
 * room is not mistaken for a duplicate of the next.
 */
/** How often (in beats) the turns of keys not served for a day are removed. */
const PRUNE_EVERY = 1000;
const DAY_MS = 86_400_000;

export class AdmissionPass {
  private readonly loop: PeriodicPass;
  private beats = 0;

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

  /**
   * One beat: the runs it started. First it ends the queued runs past their TTL (`ExpireQueuedRun`; the
   * decider checks the deadline again against the log) and the debounced runs a later request of their key
   * superseded (an `AdmitRun` naming the debounce: the admission finds the key's latest request again under
   * its lock). Both are read from the runs rows: after a crash the next beat of any orchestrator finds them.
   */
  async tick(): Promise<number> {
    const at = this.clock.now().toISOString();
    const { sql } = this.db;
    await this.askEach(
      'queue-ttl',
      await expiredQueuedRuns(sql, at, this.options.batch),
      'queued runs past their TTL',
      (r) => ({
        type: 'ExpireQueuedRun',
        ...asked(r, at),
      }),
    );
    await this.askEach(
      'debounce',
      await supersededRuns(sql, this.options.batch),
      'debounced runs a later request superseded',
      (r) => ({
        type: 'AdmitRun',
        ...asked(r, at),
        debounce: r.debounce,
      }),
    );
    const candidates = await admissionCandidates(sql, this.options.maxActiveRuns, this.options.batch, at);
    if (candidates.length === 0) return 0;
    let started = 0;
    for (const c of candidates) {
      const command: AdmitRun = {
        type: 'AdmitRun',
        ...asked(c, at),
        ...(this.options.maxActiveRuns > 0 ? { activeRunLimit: this.options.maxActiveRuns } : {}),
        ...(c.slots.length > 0 ? { slots: c.slots } : {}),
        ...(c.throttle ? { throttle: c.throttle } : {}),
        ...(c.debounce ? { debounce: c.debounce } : {}),
      };
      if (await this.ask('admit', command)) {
        started++;
        // The keys take turns (see admissionCandidates): this one was served now.
        await noteSlotTurns(
          sql,
          c.tenantId,
          c.slots.slice(0, 1).map((s) => s.key),
          at,
        );
      }
    }
    if (++this.beats % PRUNE_EVERY === 0)
      await pruneSlotTurns(sql, new Date(this.clock.now().getTime() - DAY_MS).toISOString());
    if (started > 0) this.logger.info({ started, asked: candidates.length }, 'admission pass started held runs');
    return started;
  }

  /** Asks the thread of each run to end it (`command`), and logs how many it ended. */
  private async askEach<R>(
    kind: string,
    due: readonly R[],
    what: string,
    command: (r: R) => AdmitRun | ExpireQueuedRun,
  ): Promise<void> {
    let ended = 0;
    for (const r of due) if (await this.ask(kind, command(r))) ended++;
    if (ended > 0) this.logger.info({ ended }, `admission pass ended ${what}`);
  }

  /**
   * Asks a run's thread, through the same handler as every other message; true when it decided. Each ask
   * has a message id of its own (the beat's time): an ask that decided nothing is not a duplicate of the next.
   */
  private async ask(kind: string, command: AdmitRun | ExpireQueuedRun): Promise<boolean> {
    const id = `${kind}:${command.tenantId}:${command.runId}@${command.at}`;
    const outcome = await this.handler.handle('admission', id, command, { correlationId: command.runId });
    return outcome.status === 'applied';
  }
}

/** The thread and run a pass's ask is about, at the beat's time. */
function asked(r: { tenantId: string; threadId: string; runId: string }, at: string) {
  return { tenantId: r.tenantId, threadId: r.threadId, runId: r.runId, at };
}
