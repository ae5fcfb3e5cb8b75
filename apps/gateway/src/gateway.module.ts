import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  ApiKeyRepository,
  IdempotencyKeysRepository,
  JetStreamPublisher,
  JwtRevocationsRepository,
  type Database,
  type MessagePublisher,
} from '@ratchet/adapters';
import {
  AgentsRoutes,
  ApprovalsClient,
  ApprovalsRoutes,
  WaitpointsRoutes,
  parseCallbackKeys,
  IdempotentAnswers,
  MemoryRoutes,
  RunAdmissionCheck,
  RunRequestPublisher,
  RunsRoutes,
  SchedulesRoutes,
  ThreadsRoutes,
  UsageRoutes,
  WebhooksRoutes,
  type RunStarts,
} from '@ratchet/http-edge';
import type { NatsConnection } from 'nats';
import { AgentsController, DeploymentAgentsController } from './agents/agents.controller';
import { ToolsController } from './tools/tools.controller';
import { SchedulesController } from './schedules/schedules.controller';
import { WebhooksController } from './webhooks/webhooks.controller';
import { UsageController } from './usage/usage.controller';
import { ApprovalsController } from './approvals/approvals.controller';
import { WaitpointsController } from './approvals/waitpoints.controller';
import { AuthGuard } from './auth/auth.guard';
import { JwtVerifier } from './auth/jwt.verifier';
import { RequestLimits } from './auth/request-limits';
import { Backends } from './backends/backends';
import type { GatewayConfig } from './gateway.config';
import {
  API_KEYS,
  IDEMPOTENCY_KEYS,
  DATABASE,
  GATEWAY_CONFIG,
  JWT_REVOCATIONS,
  JWT_VERIFIER,
  LOGGER,
  MESSAGE_PUBLISHER,
  NATS_CONNECTION,
  RATE_LIMITER,
  RUN_STARTS,
} from './gateway.tokens';
import { HealthController, MetricsController } from './health/health.controller';
import { ReadinessIndicators } from './health/readiness.indicators';
import { IdempotencyInterceptor } from './http/idempotent';
import { ProblemDetailsFilter } from './http/problem-details.filter';
import type { Logger } from './logging/logger';
import { PrincipalsResponder } from './principals/principals.responder';
import { MemoryController } from './memory/memory.controller';
import { RevocationsController } from './revocations/revocations.controller';
import { RunsController } from './runs/runs.controller';
import { EventStreamer } from './threads/event-stream';
import { ThreadsController } from './threads/threads.controller';

/** What main.ts (or a test) opens before Nest starts. The module owns them from then on and closes them. */
export interface GatewayResources {
  config: GatewayConfig;
  db: Database;
  nc: NatsConnection;
  logger: Logger;
  /** Defaults to a JetStreamPublisher on `nc`; tests swap it to simulate an unreachable bus. */
  publisher?: MessagePublisher;
}

/**
 * Closes NATS and Postgres on shutdown. Nest calls this after the HTTP server has stopped accepting
 * and its in-flight requests have finished, so no request loses its connection mid-publish.
 */
@Injectable()
class ResourceLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.nc.isClosed()) {
      // drain() flushes pending publishes; it can wait forever for a server that is gone, so bound it.
      await Promise.race([this.nc.drain().catch(() => undefined), delay(3_000)]);
      if (!this.nc.isClosed()) await this.nc.close().catch(() => undefined);
    }
    await this.db.close();
    this.logger.info('gateway stopped');
  }
}

@Module({})
export class GatewayModule {
  static forRoot(resources: GatewayResources): DynamicModule {
    return {
      module: GatewayModule,
      // Terminus's own error log is multi-line; HealthController logs failures itself, as one JSON line.
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [
        RunsController,
        ThreadsController,
        MemoryController,
        AgentsController,
        DeploymentAgentsController,
        ToolsController,
        SchedulesController,
        WebhooksController,
        HealthController,
        MetricsController,
        ApprovalsController,
        WaitpointsController,
        RevocationsController,
        UsageController,
      ],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: resources.config },
        { provide: DATABASE, useValue: resources.db },
        { provide: NATS_CONNECTION, useValue: resources.nc },
        { provide: LOGGER, useValue: resources.logger },
        {
          provide: MESSAGE_PUBLISHER,
          useFactory: () => resources.publisher ?? new JetStreamPublisher(resources.nc),
        },
        { provide: API_KEYS, useFactory: (db: Database) => new ApiKeyRepository(db.sql), inject: [DATABASE] },
        {
          provide: IDEMPOTENCY_KEYS,
          useFactory: (db: Database) => new IdempotencyKeysRepository(db.sql),
          inject: [DATABASE],
        },
        {
          provide: JWT_REVOCATIONS,
          useFactory: (db: Database) => new JwtRevocationsRepository(db.sql),
          inject: [DATABASE],
        },
        { provide: JWT_VERIFIER, useFactory: () => jwtVerifierFor(resources.config) },
        {
          provide: RATE_LIMITER,
          useFactory: () =>
            new RequestLimits({
              perPrincipal: resources.config.GATEWAY_RATE_LIMIT_PER_MINUTE,
              perTenant: resources.config.GATEWAY_TENANT_RATE_LIMIT_PER_MINUTE,
              authFailuresPerSource: resources.config.GATEWAY_AUTH_FAILURES_PER_MINUTE,
            }),
        },
        // Global, so a new route is authenticated unless it says @Public().
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
        {
          provide: IdempotentAnswers,
          useFactory: (keys: IdempotencyKeysRepository) =>
            new IdempotentAnswers(keys, resources.logger, undefined, resources.config.GATEWAY_IDEMPOTENCY_HOLD_SECONDS),
          inject: [IDEMPOTENCY_KEYS],
        },
        // Global, after the guard: the routes marked @Idempotent() answer a key once.
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        {
          provide: RunRequestPublisher,
          useFactory: (publisher: MessagePublisher) =>
            new RunRequestPublisher(publisher, {
              subjectPrefix: resources.config.RATCHET_SUBJECT_PREFIX,
              publishTimeoutMs: resources.config.GATEWAY_PUBLISH_TIMEOUT_MS,
            }),
          inject: [MESSAGE_PUBLISHER],
        },
        {
          provide: RunAdmissionCheck,
          useFactory: (backends: Backends) => new RunAdmissionCheck(backends, resources.logger),
          inject: [Backends],
        },
        {
          provide: RUN_STARTS,
          useFactory: (runRequests: RunRequestPublisher, admission: RunAdmissionCheck): RunStarts => ({
            runRequests,
            admission,
            webhooks: { allowPrivate: resources.config.WEBHOOK_ALLOW_PRIVATE },
          }),
          inject: [RunRequestPublisher, RunAdmissionCheck],
        },
        {
          provide: RunsRoutes,
          useFactory: (starts: RunStarts, backends: Backends) =>
            new RunsRoutes(starts, backends, resources.nc, resources.config.RATCHET_SUBJECT_PREFIX),
          inject: [RUN_STARTS, Backends],
        },
        {
          provide: ThreadsRoutes,
          useFactory: (starts: RunStarts, backends: Backends) => new ThreadsRoutes(starts, backends),
          inject: [RUN_STARTS, Backends],
        },
        { provide: AgentsRoutes, useFactory: (backends: Backends) => new AgentsRoutes(backends), inject: [Backends] },
        { provide: MemoryRoutes, useFactory: (backends: Backends) => new MemoryRoutes(backends), inject: [Backends] },
        {
          provide: SchedulesRoutes,
          useFactory: (backends: Backends) => new SchedulesRoutes(backends),
          inject: [Backends],
        },
        { provide: UsageRoutes, useFactory: (backends: Backends) => new UsageRoutes(backends), inject: [Backends] },
        {
          provide: WebhooksRoutes,
          useFactory: (backends: Backends) => new WebhooksRoutes(backends),
          inject: [Backends],
        },
        {
          provide: ApprovalsClient,
          useFactory: () => new ApprovalsClient(resources.nc, resources.config.RATCHET_SUBJECT_PREFIX),
        },
        {
          provide: ApprovalsRoutes,
          useFactory: (client: ApprovalsClient) => new ApprovalsRoutes(client),
          inject: [ApprovalsClient],
        },
        {
          provide: WaitpointsRoutes,
          useFactory: (client: ApprovalsClient) => {
            const keys = resources.config.WAITPOINT_CALLBACK_KEYS;
            const parsed = keys === undefined ? undefined : parseCallbackKeys(keys);
            return new WaitpointsRoutes(client, parsed?.ok ? parsed.keys : []);
          },
          inject: [ApprovalsClient],
        },
        Backends,
        EventStreamer,
        PrincipalsResponder,
        ReadinessIndicators,
        ResourceLifecycle,
      ],
    };
  }
}

function jwtVerifierFor(config: GatewayConfig): JwtVerifier | null {
  const { GATEWAY_JWT_JWKS_URL: jwksUrl, GATEWAY_JWT_ISSUER: issuer, GATEWAY_JWT_AUDIENCE: audience } = config;
  if (!jwksUrl || !issuer || !audience) return null;
  return new JwtVerifier({ jwksUrl, issuer, audience, algorithms: config.GATEWAY_JWT_ALGORITHMS });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
