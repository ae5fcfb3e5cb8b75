import { Controller, Get, Inject, Req, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { serveMetrics } from '@ratchet/platform';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../auth/roles.decorator';
import { LOGGER } from '../gateway.tokens';
import { PROBLEM_TYPES, ProblemException } from '@ratchet/http-edge';
import type { Logger } from '../logging/logger';
import { ReadinessIndicators } from './readiness.indicators';

/** Kubernetes probes. Unauthenticated: they reveal only up/down and which dependency is down. */
@ApiTags('health')
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly readiness: ReadinessIndicators,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The process serves HTTP. Nothing else: a dependency outage must not get the pod restarted. */
  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process serves HTTP' })
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  /** Postgres answers, migrations are applied and NATS is connected: safe to route traffic here. */
  @Get('ready')
  @ApiOperation({ summary: 'Readiness: Postgres answers, migrations are applied, NATS is connected' })
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.readiness.postgres(),
        () => this.readiness.migrations(),
        () => this.readiness.nats(),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      // Terminus answers 503 with its own body; keep the problem+json shape, with the checks attached.
      const result = error.getResponse() as Partial<HealthCheckResult>;
      this.logger.warn({ checks: result.error ?? {} }, 'not ready');
      throw new ProblemException({
        type: PROBLEM_TYPES.notReady,
        title: 'Not ready',
        status: 503,
        detail: `Failing checks: ${Object.keys(result.error ?? {}).join(', ') || result.status || 'unknown'}.`,
        checks: result.details ?? {},
      });
    }
  }
}

/** Prometheus scrapes `GET /metrics`. Unauthenticated like the probes: counts and durations, no content. */
@ApiTags('health')
@Controller('metrics')
@Public()
export class MetricsController {
  @Get()
  @ApiOperation({ summary: "Prometheus metrics: the gateway's OpenTelemetry instruments in the text format" })
  @ApiProduces('text/plain')
  @ApiResponse({
    status: 200,
    description: 'Prometheus text exposition format 0.0.4',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  scrape(@Req() request: IncomingMessage, @Res() response: ServerResponse): void {
    serveMetrics(request, response);
  }
}
