/**
 * Runs `pass` every `intervalMs`, one at a time: a pass still going when the next is due is not started
 * twice, and `stop()` waits for the one in progress. A failed pass goes to `failed` (the next one retries);
 * `due`, when given, is asked first and skips the beat when it says no. The timer does not keep the process
 * alive.
 */
export class PeriodicPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => Promise<unknown>,
    private readonly failed: (error: unknown) => void,
    private readonly due: () => boolean = () => true,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.due()) return;
      this.running ??= this.pass()
        .catch(this.failed)
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
