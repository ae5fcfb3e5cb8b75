import type { ModelCallLeases } from '@ratchet/adapters';
import { failpoint, LeaseRenewal, type Logger, type RunStops } from '@ratchet/platform';

/** The call lost its lease: another worker holds it, the watchdog gave up on it, or the thread moved on. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(readonly outboxId: string) {
    super(`model call ${outboxId}: this process no longer holds it`);
  }
}

export interface CallOwner {
  tenantId: string;
  runId: string;
  /** The outbox row this process holds the lease of (undefined: it holds none). */
  leasedRow?: string | undefined;
}

/**
 * The model calls this process is making (local ones and those taken off the bus), each under an abort
 * controller that fires when the run stops (`RunStops`), when this process loses the call's lease, or
 * when the caller's own deadline passes. Leases are renewed for all calls at once, one statement every
 * third of the lease: a lease not renewed (the call is no longer this process's, or no longer current)
 * aborts its call, so a replaced or cancelled call does not keep running, and two attempts of one step
 * never run at once.
 */
export class ModelCalls {
  private readonly leased = new Map<string, AbortController>();
  private readonly renewal: LeaseRenewal;

  constructor(
    private readonly leases: ModelCallLeases,
    private readonly stops: RunStops,
    readonly holder: string,
    readonly leaseMs: number,
    private readonly logger: Logger,
  ) {
    this.renewal = new LeaseRenewal(() => this.renew(), leaseMs);
  }

  start(): void {
    this.renewal.start();
  }

  stop(): Promise<void> {
    return this.renewal.stop();
  }

  /** Calls running now. */
  get size(): number {
    return this.leased.size;
  }

  /**
   * Runs `work` for a call with a signal that aborts when the run stops or the lease is lost. The signal's
   * `reason` says which (`RunStoppedError`, `LeaseLostError`).
   */
  async run<T>(owner: CallOwner, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const untrack = this.stops.track(owner.tenantId, owner.runId, controller);
    if (owner.leasedRow) this.leased.set(owner.leasedRow, controller);
    try {
      return await work(controller.signal);
    } finally {
      untrack();
      if (owner.leasedRow && this.leased.get(owner.leasedRow) === controller) this.leased.delete(owner.leasedRow);
    }
  }

  private async renew(): Promise<void> {
    const ids = [...this.leased.keys()];
    if (ids.length === 0) return;
    let held: Set<string>;
    try {
      held = await this.leases.renew(ids, this.holder, this.leaseMs);
    } catch (error) {
      // Nothing is known: keep the calls (nobody can claim them while the database is unreachable either).
      this.logger.warn({ err: error, calls: ids.length }, 'renewing model-call leases failed');
      return;
    }
    // A crash just after a renewal leaves the longest lease behind: the call's redelivery comes first.
    if (held.size > 0) failpoint('orchestrator.model-lease.renewed');
    for (const id of ids) {
      if (held.has(id)) continue;
      const controller = this.leased.get(id);
      this.leased.delete(id);
      if (controller && !controller.signal.aborted) {
        this.logger.info({ outboxId: id }, 'model call aborted: this process no longer holds it');
        controller.abort(new LeaseLostError(id));
      }
    }
  }
}
