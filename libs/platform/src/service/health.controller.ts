import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveMetrics } from '../telemetry';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { ServiceRuntime } from './service-runtime';

/** Readiness waits on this: set once every consumer of the service is bound. */
export class Readiness {
  consumersBound = false;
}

/**
 * Kubernetes probes. Liveness says the process is serving; readiness says it can do its work:
 * Postgres answers, its migrations are applied, NATS is connected, and its consumers are bound.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(Readiness) private readonly readiness: Readiness,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok', service: this.runtime.service };
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      async () => {
        const s = this.indicators.check('postgres');
        try {
          await this.runtime.db.sql.query('select 1');
          const pending = await this.runtime.db.pendingMigrations();
          return pending.length === 0 ? s.up() : s.down({ pendingMigrations: pending });
        } catch (error) {
          return s.down({ error: (error as Error).message });
        }
      },
      () => {
        const s = this.indicators.check('nats');
        return this.runtime.nc.isClosed() ? s.down('connection closed') : s.up();
      },
      () => {
        const s = this.indicators.check('consumers');
        return this.readiness.consumersBound ? s.up() : s.down('not bound yet');
      },
    ]);
  }
}

/** Prometheus scrapes `GET /metrics` on the health port, next to the probes. */
@Controller('metrics')
export class MetricsController {
  @Get()
  scrape(@Req() request: IncomingMessage, @Res() response: ServerResponse): void {
    serveMetrics(request, response);
  }
}
