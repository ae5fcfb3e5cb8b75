/**
 * Renews a process's leases every third of their term while started: `renew` runs on a timer (unref'd:
 * it keeps no process alive), never two at once — a tick while one still runs is skipped. `stop()` ends
 * the timer and waits for the renewal under way.
 */
export class LeaseRenewal {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly renew: () => Promise<void>,
    private readonly leaseMs: number,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => {
        this.running ??= this.renew().finally(() => (this.running = undefined));
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
