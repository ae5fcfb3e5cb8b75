import { EffectLedgerRepository, type Database, type StartEffect } from '@ratchet/adapters';
import type { LedgerSnapshot } from '@ratchet/domain';
import type { ToolLogger } from '@ratchet/tools';
import { crashPoint } from './crash-points';
import type { EffectLeases } from './effect-leases';

/**
 * The `started` row of an idempotent call that takes a while (ADR 0043). The call acts at once; if it is
 * still acting `afterMs` later, its row is written then (while it goes on acting, off its path) and its
 * lease renewed from then on, so a second delivery of a long call — the watchdog's re-send, the bus's
 * redelivery after a stall — sees it held, as if it had been claimed before it acted. A call that ends
 * sooner never writes it: its outcome inserts the row, one statement for the whole call.
 */
export class DeferredClaim {
  private timer: NodeJS.Timeout | undefined;
  private written: Promise<boolean> | undefined;
  private release: (() => void) | undefined;

  constructor(
    private readonly db: Database,
    private readonly effect: StartEffect,
    private readonly leases: EffectLeases,
    private readonly logger: ToolLogger,
    afterMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.written = this.write();
    }, afterMs);
  }

  /**
   * The call settled (or threw): no row is written from now on. Returns the claim its outcome must end
   * (compare and set), or undefined when none was written by this attempt — then the outcome statement
   * inserts the row, or finishes the one another delivery left (see recordPureOutcome).
   */
  async settle(): Promise<LedgerSnapshot | undefined> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const written = await this.written;
    this.release?.();
    this.release = undefined;
    return written ? { state: 'started', attempts: 1 } : undefined;
  }

  private async write(): Promise<boolean> {
    try {
      const found = await new EffectLedgerRepository(this.db.sql).recordStarted(this.effect, this.leases.holder);
      // Another delivery's row, or the run was recorded stopped meanwhile: this attempt acts on regardless
      // (an effect already acting is left to finish) and its outcome settles with what is there.
      if (found !== 'inserted') return false;
      this.release = this.leases.hold(this.effect.key);
      await crashPoint('tools.after-deferred-claim');
      return true;
    } catch (error) {
      this.logger.warn('the deferred claim of an effect could not be written; its outcome is recorded without it', {
        key: this.effect.key,
        error: error instanceof Error ? error.message : String(error),
      });
      return false;
    }
  }
}
