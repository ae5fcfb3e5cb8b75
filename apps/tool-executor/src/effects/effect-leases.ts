import type { EffectLedgerRepository } from '@ratchet/adapters';
import { LeaseRenewal, type Logger } from '@ratchet/platform';

/**
 * The `started` effects this executor acts on, their leases renewed in one statement every third of the
 * lease while the tools run. Another delivery of one of them meanwhile (a command the watchdog re-sent)
 * sees the lease and leaves the effect alone; once this process is gone, the lease runs out and the
 * ledger's rules for an interrupted effect apply (retry, reconcile or escalate).
 */
export class EffectLeases {
  private readonly held = new Map<string, number>();
  private readonly renewal: LeaseRenewal;

  constructor(
    private readonly ledger: EffectLedgerRepository,
    readonly holder: { holder: string; leaseMs: number },
    private readonly logger: Logger,
  ) {
    this.renewal = new LeaseRenewal(() => this.renew(), holder.leaseMs);
  }

  start(): void {
    this.renewal.start();
  }

  stop(): Promise<void> {
    return this.renewal.stop();
  }

  /** Keeps the lease of `key` renewed until the returned function is called. */
  hold(key: string): () => void {
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
    return () => {
      const n = (this.held.get(key) ?? 1) - 1;
      if (n > 0) this.held.set(key, n);
      else this.held.delete(key);
    };
  }

  private async renew(): Promise<void> {
    const keys = [...this.held.keys()];
    if (keys.length === 0) return;
    try {
      const renewed = await this.ledger.renewLeases(keys, this.holder.holder, this.holder.leaseMs);
      const lost = keys.filter((k) => !renewed.has(k));
      // Finished meanwhile (its outcome recorded), or taken by another executor after a long pause here.
      if (lost.length > 0) this.logger.debug({ effects: lost }, 'effect leases not renewed: no longer started here');
    } catch (error) {
      this.logger.warn({ err: error, effects: keys.length }, 'renewing effect leases failed');
    }
  }
}
