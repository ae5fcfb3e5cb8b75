import { RunStopNotice, type Subjects } from '@ratchet/contracts';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { Logger } from './logger';

/** How long a stopped run is remembered for work that arrives for it later. */
const REMEMBER_MS = 10 * 60_000;
const REMEMBER_MAX = 10_000;

/**
 * The work this process does for runs (model calls, tool calls), and the runs that stopped: when the
 * orchestrator commits a run's end (cancelled, interrupted, out of time) it broadcasts `run.stop` on
 * core NATS, and every process aborts what it is still doing for that run. Best effort and immediate;
 * what must hold whatever happens to a broadcast is kept durable elsewhere (model-call leases, the tool
 * executor's record of stopped runs).
 */
export class RunStops {
  private readonly running = new Map<string, Set<AbortController>>();
  private readonly stopped = new Map<string, number>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    if (this.subscription) return;
    this.subscription = this.nc.subscribe(this.subjects.runStopsAll, {
      callback: (error, msg) => {
        if (error) return;
        const notice = readRunStop(this.subjects, msg, this.logger);
        if (notice) this.stop(notice.tenantId, notice.runId, notice.reason);
      },
    });
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  /**
   * Registers work for a run; its controller is aborted (reason: a `RunStoppedError`) when the run stops.
   * Returns the function that ends the registration. Work for a run known to have stopped is aborted at once.
   */
  track(tenantId: string, runId: string, controller: AbortController): () => void {
    const key = `${tenantId}/${runId}`;
    if (this.wasStopped(tenantId, runId)) controller.abort(new RunStoppedError(runId, 'the run had stopped'));
    let set = this.running.get(key);
    if (!set) this.running.set(key, (set = new Set()));
    set.add(controller);
    return () => {
      set.delete(controller);
      if (set.size === 0 && this.running.get(key) === set) this.running.delete(key);
    };
  }

  /** Whether this process heard (within the last minutes) that the run stopped. */
  wasStopped(tenantId: string, runId: string): boolean {
    const at = this.stopped.get(`${tenantId}/${runId}`);
    return at !== undefined && this.now() - at < REMEMBER_MS;
  }

  /** The run stopped: abort what this process does for it, and remember it for work that comes later. */
  stop(tenantId: string, runId: string, reason: string): number {
    const key = `${tenantId}/${runId}`;
    this.remember(key);
    const set = this.running.get(key);
    if (!set) return 0;
    for (const controller of set) controller.abort(new RunStoppedError(runId, reason));
    this.logger.info({ tenantId, runId, aborted: set.size }, 'run stopped: work in flight aborted');
    return set.size;
  }

  private remember(key: string): void {
    this.stopped.delete(key);
    this.stopped.set(key, this.now());
    // Oldest first (insertion order): drop what is past its time, and keep the map bounded.
    for (const [k, at] of this.stopped) {
      if (this.stopped.size <= REMEMBER_MAX && this.now() - at < REMEMBER_MS) break;
      this.stopped.delete(k);
    }
  }
}

/**
 * A `run.stop` broadcast as every listener reads it: its notice, or (logged) undefined when it does not
 * parse or did not arrive on its own tenant's (and thread's) subject — the tenant is the subject's, so a
 * notice cannot stop another tenant's work.
 */
export function readRunStop(
  subjects: Subjects,
  msg: Pick<Msg, 'subject' | 'data'>,
  logger: Logger,
): RunStopNotice | undefined {
  const parsed = RunStopNotice.safeParse(json(msg.data));
  if (parsed.success && msg.subject === subjects.runStops(parsed.data.tenantId, parsed.data.threadId))
    return parsed.data;
  logger.warn({ subject: msg.subject }, 'run.stop notice ignored: it does not parse or is not its tenant’s');
  return undefined;
}

function json(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data)) as unknown;
  } catch {
    return undefined;
  }
}

/** The reason a run's work was aborted: the run stopped (cancelled, interrupted, out of time). */
export class RunStoppedError extends Error {
  override readonly name = 'RunStoppedError';
  constructor(
    readonly runId: string,
    readonly reason: string,
  ) {
    super(`run ${runId} stopped: ${reason}`);
  }
}
