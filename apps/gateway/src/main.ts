import 'reflect-metadata';
import {
  ApiKeyRepository,
  GATEWAY_MIGRATIONS,
  connectNats,
  ensureTopology,
  masterKeyFromFile,
  openDatabase,
  type Database,
} from '@ratchet/adapters';
import { exitOnConfigError, loadConfig, RATCHET_VERSION, startTelemetry, topologyFromConfig } from '@ratchet/platform';
import type { NatsConnection } from 'nats';
import { ensureBootstrapKey } from './bootstrap/bootstrap-key';
import { BOOTSTRAP_KEY_ROLES, gatewayConfigSchema, type GatewayConfig } from './gateway.config';
import { createGatewayApp } from './http/create-app';
import { createLogger, type Logger } from './logging/logger';

/**
 * Boot order: config → Postgres (+ migrations) → NATS (+ streams) → bootstrap key → HTTP. Every
 * dependency is proven before the port opens, so "listening" means "able to serve".
 */
async function main(): Promise<void> {
  const config = loadConfig(gatewayConfigSchema, process.env, 'gateway');
  const logger = createLogger({ level: config.LOG_LEVEL, instance: config.SERVICE_INSTANCE_ID });
  // OTLP when configured; `GET /metrics` for Prometheus either way.
  startTelemetry('gateway', RATCHET_VERSION, config.SERVICE_INSTANCE_ID);

  let db: Database | undefined;
  let nc: NatsConnection | undefined;
  try {
    db = await openDatabase({
      url: config.DATABASE_URL,
      schema: 'gateway',
      migrations: GATEWAY_MIGRATIONS,
      masterKey: masterKeyFromFile(config.RATCHET_KEY_FILE),
    });
    const applied = await db.migrate();
    logger.info({ database: db.safeUrl, schema: db.schema, applied }, 'database ready');

    nc = await connectNats({ url: config.NATS_URL, name: `gateway ${config.SERVICE_INSTANCE_ID}` });
    watchNats(nc, logger);
    // Streams only: the gateway publishes requests and consumes nothing, so it creates no consumers.
    const topology = topologyFromConfig(config);
    const streams = await ensureTopology(await nc.jetstreamManager(), topology, []);
    logger.info({ streams: streams.streams }, 'jetstream streams ready');

    await bootstrapKey(config, new ApiKeyRepository(db.sql), logger);
  } catch (error) {
    await nc?.close().catch(() => undefined);
    await db?.close().catch(() => undefined);
    throw error;
  }

  const app = await createGatewayApp({ config, db, nc, logger });
  // process.exit(0) after a clean shutdown, so pino's buffered lines are flushed through 'exit'.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  onShutdownSignal(() => {
    // A shutdown stuck on a dead dependency must not outlive the orchestrator's grace period.
    setTimeout(() => {
      logger.error({ graceMs: config.SHUTDOWN_GRACE_MS }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS).unref();
  });
  await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
  logger.info(
    {
      host: config.GATEWAY_HOST,
      port: config.GATEWAY_PORT,
      url: `http://${config.GATEWAY_HOST}:${config.GATEWAY_PORT}`,
    },
    'gateway listening',
  );
}

async function bootstrapKey(config: GatewayConfig, keys: ApiKeyRepository, logger: Logger): Promise<void> {
  const secret = config.GATEWAY_BOOTSTRAP_API_KEY;
  if (!secret) return;
  const tenantId = config.GATEWAY_BOOTSTRAP_TENANT;
  const outcome = await ensureBootstrapKey(keys, secret, tenantId);
  switch (outcome.status) {
    case 'created':
      logger.warn(
        { keyId: outcome.keyId, tenantId, roles: BOOTSTRAP_KEY_ROLES },
        'bootstrap API key created; do not use GATEWAY_BOOTSTRAP_API_KEY in production',
      );
      break;
    case 'exists':
      if (outcome.tenantId !== tenantId) {
        logger.warn(
          { keyId: outcome.keyId, keyTenant: outcome.tenantId, configuredTenant: tenantId },
          'bootstrap API key belongs to another tenant; left unchanged',
        );
      } else {
        logger.info({ keyId: outcome.keyId, tenantId, roles: outcome.roles }, 'bootstrap API key present');
      }
      break;
    case 'disabled':
      logger.warn({ tenantId }, 'bootstrap API key was revoked or has expired; not re-creating it');
      break;
  }
}

/** Connection changes, one log line each: the first thing an SRE looks for when publishes fail. */
function watchNats(nc: NatsConnection, logger: Logger): void {
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'pingTimer') continue;
      const level =
        status.type === 'reconnect'
          ? 'info'
          : status.type === 'error' || status.type === 'disconnect'
            ? 'warn'
            : 'debug';
      logger[level]({ nats: status.type, data: String(status.data) }, `nats ${status.type}`);
    }
  })();
  void nc.closed().then((error) => {
    if (error) logger.error({ err: error }, 'nats connection closed with an error; /health/ready now fails');
  });
}

function onShutdownSignal(fn: () => void): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, fn);
}

// A bad environment exits 78 with the variable named (exitOnConfigError); any other boot failure —
// Postgres or NATS unreachable — prints the libraries' own message, without a stack, and exits 1.
exitOnConfigError(main).catch((error: unknown) => {
  process.stderr.write(`gateway: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
