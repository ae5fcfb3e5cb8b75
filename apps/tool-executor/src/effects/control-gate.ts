import type { JetStreamManager } from 'nats';
import type { Logger } from '@ratchet/platform';

/**
 * Holds tool calls back at start until the run-stop notices already waiting have been handled: a stop
 * committed while no executor ran sits in its own consumer next to the calls it stops, and the two
 * consumers are served in no particular order. Opens once the control consumer has nothing pending or
 * unacked, or after `maxWaitMs` (a notice that cannot be handled must not hold every tool call).
 */
export class ControlGate {
  private opened = false;
  readonly ready: Promise<void>;
  private open!: () => void;

  constructor(
    private readonly jsm: () => Promise<JetStreamManager>,
    private readonly stream: string,
    private readonly consumer: string,
    private readonly logger: Logger,
    private readonly options: { pollMs?: number; maxWaitMs?: number } = {},
  ) {
    this.ready = new Promise((resolve) => (this.open = resolve));
  }

  /** Starts watching; resolves `ready` when caught up. */
  async watch(): Promise<void> {
    const deadline = Date.now() + (this.options.maxWaitMs ?? 10_000);
    try {
      const jsm = await this.jsm();
      while (!this.opened && Date.now() < deadline) {
        const info = await jsm.consumers.info(this.stream, this.consumer).catch(() => undefined);
        if (info && info.num_pending === 0 && info.num_ack_pending === 0) break;
        await new Promise((r) => setTimeout(r, this.options.pollMs ?? 100));
      }
      if (Date.now() >= deadline)
        this.logger.warn({ consumer: this.consumer }, 'run-stop notices still pending at start; tool calls go ahead');
    } finally {
      this.opened = true;
      this.open();
    }
  }
}
