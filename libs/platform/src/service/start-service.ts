import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplication, Type } from '@nestjs/common';
import type { FairShareOptions } from '@ratchet/adapters';
import { JetStreamExceptionFilter, JetStreamServer } from '../jetstream';
import { startTelemetry } from '../telemetry';
import { Readiness } from './health.controller';
import { RATCHET_VERSION } from './version';
import { ServiceRuntime, type RuntimeOptions } from './service-runtime';

export interface StartServiceOptions extends RuntimeOptions {
  /** The service's root module; receives the runtime and returns the Nest module to boot. */
  module: (runtime: ServiceRuntime) => Type<unknown> | import('@nestjs/common').DynamicModule;
  healthPort: number;
  host?: string;
  shutdownGraceMs: number;
  /** Runs after the runtime is up and before any message is consumed (e.g. registering agents). */
  prepare?: (runtime: ServiceRuntime) => Promise<void>;
  /** Handlers running at once per consumer: one number for all, or per consumer (others keep 8). */
  maxMessages?: number | Partial<Record<string, number>>;
  /** Fair shares between tenants on these consumers (see `consume()`). */
  fairShares?: Partial<Record<string, FairShareOptions>>;
}

/**
 * Boots a worker service: runtime first (so a bad database or bus fails fast with a clear message),
 * then Nest with the JetStream transport and the HTTP health probes. On SIGTERM/SIGINT it stops
 * pulling, lets in-flight messages finish (nothing is acked before its commit), drains NATS, closes
 * Postgres and exits.
 */
export async function startService(
  options: StartServiceOptions,
): Promise<{ app: INestApplication; runtime: ServiceRuntime; stop(): Promise<void> }> {
  const telemetry = startTelemetry(options.service, RATCHET_VERSION, options.config.SERVICE_INSTANCE_ID);
  const runtime = await ServiceRuntime.start(options);
  try {
    await options.prepare?.(runtime);
  } catch (error) {
    await runtime.stop();
    throw error;
  }
  const app = await NestFactory.create(options.module(runtime) as Type<unknown>, {
    logger: ['error', 'warn'],
    abortOnError: false,
  });
  app.useGlobalFilters(new JetStreamExceptionFilter());
  // Probes first (readiness stays false until the consumers are bound), so a port clash fails before
  // any message is pulled.
  await app.listen(options.healthPort, options.host ?? '0.0.0.0');
  if (options.consumers.length > 0) {
    app.connectMicroservice(
      {
        strategy: new JetStreamServer({
          name: options.service,
          connection: runtime.nc,
          topology: runtime.topology,
          ensureTopology: false,
          onPoison: runtime.recordPoison,
          stopTimeoutMs: options.shutdownGraceMs,
          ...(options.maxMessages ? { maxMessages: options.maxMessages } : {}),
          ...(options.fairShares ? { fairShares: options.fairShares } : {}),
        }),
      },
      { inheritAppConfig: true },
    );
    await app.startAllMicroservices();
  }
  app.get(Readiness).consumersBound = true;
  runtime.logger.info({ healthPort: options.healthPort, consumers: options.consumers }, `${options.service} started`);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      runtime.logger.info('shutting down: draining in-flight messages');
      await app.close().catch((e: unknown) => runtime.logger.warn({ err: e }, 'nest close failed'));
      await runtime.stop();
      await telemetry.shutdown().catch(() => undefined);
    })());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      const timer = setTimeout(() => process.exit(1), options.shutdownGraceMs + 5_000);
      timer.unref();
      void stop().then(() => process.exit(0));
    });
  }
  return { app, runtime, stop };
}
