import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { Database } from '@ratchet/adapters';
import type { NatsConnection } from 'nats';
import { DATABASE, NATS_CONNECTION } from '../gateway.tokens';

/** A probe must answer before the kubelet gives up on it (default 1 s), even when Postgres hangs. */
const CHECK_TIMEOUT_MS = 800;

/** What the gateway needs to serve requests: Postgres answering, its schema migrated, NATS not closed. */
@Injectable()
export class ReadinessIndicators {
  constructor(
    private readonly health: HealthIndicatorService,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  async postgres(): Promise<HealthIndicatorResult<'postgres'>> {
    const check = this.health.check('postgres');
    try {
      await withTimeout(this.db.sql.query('select 1'), CHECK_TIMEOUT_MS);
      return check.up();
    } catch (error) {
      return check.down({ message: messageOf(error) });
    }
  }

  async migrations(): Promise<HealthIndicatorResult<'migrations'>> {
    const check = this.health.check('migrations');
    try {
      const pending = await withTimeout(this.db.pendingMigrations(), CHECK_TIMEOUT_MS);
      return pending.length === 0 ? check.up() : check.down({ message: 'migrations pending', pending });
    } catch (error) {
      return check.down({ message: messageOf(error) });
    }
  }

  /**
   * Only a closed connection is "not ready". While nats.js reconnects, publishes fail fast with 503 +
   * Retry-After; taking every replica out of the load balancer during a NATS blip would turn that
   * into connection errors, which clients handle worse.
   */
  nats(): HealthIndicatorResult<'nats'> {
    const check = this.health.check('nats');
    return this.nc.isClosed()
      ? check.down({ message: 'connection closed' })
      : check.up({ server: this.nc.getServer() });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
