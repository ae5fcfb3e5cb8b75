import { TransientError } from '@ratchet/domain';

/**
 * Attempts of tool calls that were aborted (their timeout, their run's stop) and did not settle within the
 * grace period after it: given up on, but maybe still running in this process, because the tool ignores
 * its signal. While one runs, no other attempt of the same call starts here: a delivery of the call is
 * sent back to the bus (`TransientError`, retried later or by another executor). The entry goes when the
 * attempt settles at last. Process-wide state by nature: it is what this process is still running.
 */
export class AbandonedAttempts {
  private readonly running = new Map<string, { tool: string; since: number }>();

  /** Remembers `key`'s attempt until `settled` resolves. */
  add(key: string, tool: string, settled: Promise<unknown>, now = Date.now()): void {
    this.running.set(key, { tool, since: now });
    void settled.finally(() => this.running.delete(key));
  }

  has(key: string): boolean {
    return this.running.has(key);
  }

  /** How many abandoned attempts are still running here. */
  get size(): number {
    return this.running.size;
  }

  /** Throws when an abandoned attempt of `key` still runs here: the call must not start a second time. */
  assertNoneRunning(key: string, retryAfterMs = 1000): void {
    const running = this.running.get(key);
    if (!running) return;
    throw new TransientError(
      `an abandoned attempt of ${running.tool} (${key}) still runs in this process: no other attempt starts until it settles`,
      'tool.attempt_running',
      { retryAfterMs },
    );
  }
}

/** This process's abandoned attempts (the executor's and the orchestrator's local tools share it). */
export const abandonedAttempts = new AbandonedAttempts();
