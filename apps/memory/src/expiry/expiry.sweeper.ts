import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { MemoryItemsRepository, type Database } from '@ratchet/adapters';
import type { Logger } from '@ratchet/platform';

export interface ExpirySweeperOptions {
  intervalMs: number;
  /** Rows per delete statement: short transactions, short locks. */
  batch: number;
  /** Statements per sweep, so one sweep never runs unbounded behind a huge backlog. */
  maxBatches?: number;
}

/**
 * Purges expired items. Expired items are already invisible to every read (the rules check the
 * expiry); this is what actually removes the data, which retention promises.
 */
export class ExpirySweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly options: ExpirySweeperOptions,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One sweep: delete batches until one comes back short (or the cap is reached); returns the count. */
  async sweep(): Promise<number> {
    const repo = new MemoryItemsRepository(this.db.sql);
    let total = 0;
    for (let i = 0; i < (this.options.maxBatches ?? 20) && !this.stopped; i++) {
      const deleted = await repo.sweepExpired(this.clock().toISOString(), this.options.batch);
      total += deleted;
      if (deleted < this.options.batch) break;
    }
    if (total > 0) this.logger.info({ deleted: total }, 'expired memory items purged');
    return total;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'memory expiry sweep failed'))
        .finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }
}
