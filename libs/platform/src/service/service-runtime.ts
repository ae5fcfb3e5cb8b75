import type { NatsConnection } from 'nats';
import {
  connectNats,
  JetStreamPublisher,
  masterKeyFromFile,
  openDatabase,
  PgOutboxStore,
  recordFailure,
  type Database,
  type MigrationClass,
  type PoisonInfo,
  type Topology,
} from '@ratchet/adapters';
import { subjects, type Subjects } from '@ratchet/contracts';
import { OutboxRelay } from '../outbox';
import { createLogger, type Logger } from './logger';
import { topologyFromConfig } from './topology';
import { ensureTopologyWhenReady } from './topology-wait';
import { meter } from '../telemetry';
import { configureRedaction, redactSecrets, redactText, type OutboxStore } from '@ratchet/domain';

/** Outbox lag as OTLP gauges: rows not yet published, and the age of the oldest one. */
function observeOutboxLag(service: string, store: OutboxStore): void {
  const unsent = meter().createObservableGauge('ratchet.outbox.unsent', {
    description: 'Outbox rows not yet published',
  });
  const age = meter().createObservableGauge('ratchet.outbox.oldest_age', {
    unit: 's',
    description: 'Age of the oldest unsent outbox row',
  });
  meter().addBatchObservableCallback(
    async (result) => {
      const lag = await store.lag().catch(() => undefined);
      if (!lag) return;
      result.observe(unsent, lag.unsent, { service });
      result.observe(age, lag.oldestCreatedAt ? (Date.now() - lag.oldestCreatedAt.getTime()) / 1000 : 0, { service });
    },
    [unsent, age],
  );
}
import { RoutingPublisher } from './routing.publisher';

export interface RuntimeConfig {
  DATABASE_URL: string;
  NATS_URL: string;
  RATCHET_SUBJECT_PREFIX: string;
  RATCHET_STREAM_PREFIX: string;
  LOG_LEVEL: string;
  SERVICE_INSTANCE_ID: string;
  RATCHET_ACK_WAIT_MS: number;
  RATCHET_DUPLICATE_WINDOW_MS: number;
  /** The deployment's redaction patterns (`RATCHET_REDACT_PATTERNS`). */
  RATCHET_REDACT_PATTERNS?: readonly RegExp[];
  /** The master key file the threads' data keys are wrapped with (`RATCHET_KEY_FILE`). */
  RATCHET_KEY_FILE?: string | undefined;
}

export interface RuntimeOptions {
  service: string;
  schema: string;
  migrations: readonly MigrationClass[];
  /** The durable consumers this service binds (created or updated at start). */
  consumers: readonly string[];
  config: RuntimeConfig;
  /** Tests shorten the sweeper period. */
  sweepIntervalMs?: number;
}

/**
 * What every Ratchet service stands on: its Postgres schema (migrated at start), a NATS connection,
 * the JetStream topology, an outbox relay with its sweeper, and a logger. Nest modules receive it
 * as one provider; nothing here knows Nest.
 */
export class ServiceRuntime {
  private constructor(
    readonly service: string,
    readonly config: RuntimeConfig,
    readonly db: Database,
    readonly nc: NatsConnection,
    readonly topology: Topology,
    readonly subjects: Subjects,
    readonly relay: OutboxRelay,
    readonly logger: Logger,
  ) {}

  static async start(options: RuntimeOptions): Promise<ServiceRuntime> {
    const { config } = options;
    // The deployment's redaction patterns, for every redaction this process makes from now on.
    configureRedaction(config.RATCHET_REDACT_PATTERNS ?? []);
    const logger = createLogger(options.service, config.LOG_LEVEL, config.SERVICE_INSTANCE_ID);
    const db = await openDatabase({
      url: config.DATABASE_URL,
      schema: options.schema,
      migrations: options.migrations,
      masterKey: masterKeyFromFile(config.RATCHET_KEY_FILE),
    });
    let nc: NatsConnection | undefined;
    try {
      const applied = await db.migrate();
      if (applied.length > 0) logger.info({ applied, schema: options.schema }, 'migrations applied');
      nc = await connectNats({ url: config.NATS_URL, name: `${options.service}:${config.SERVICE_INSTANCE_ID}` });
      const topology = topologyFromConfig(config);
      await ensureTopologyWhenReady(nc, topology, options.consumers, logger);
      const publisher = new RoutingPublisher(nc, new JetStreamPublisher(nc));
      const outboxStore = new PgOutboxStore(db);
      const relay = new OutboxRelay(outboxStore, publisher, {
        intervalMs: options.sweepIntervalMs ?? 500,
        onError: (error, what) => logger.warn({ err: error }, `outbox relay: ${what}`),
      });
      relay.start();
      observeOutboxLag(options.service, outboxStore);
      return new ServiceRuntime(
        options.service,
        config,
        db,
        nc,
        topology,
        subjects(config.RATCHET_SUBJECT_PREFIX),
        relay,
        logger,
      );
    } catch (error) {
      await nc?.close().catch(() => undefined);
      await db.close().catch(() => undefined);
      throw error;
    }
  }

  /** Records a message the transport gives up on, in this service's `failed_messages` table. */
  readonly recordPoison = async (info: PoisonInfo): Promise<void> => {
    this.logger.error(
      {
        consumer: info.consumer,
        subject: info.subject,
        seq: info.streamSeq,
        reason: info.reason,
        error: redactText(info.errorMessage),
      },
      'message given up',
    );
    // A refused request is kept for inspection, not its secrets: redacted like everything that enters.
    await recordFailure(this.db.sql, {
      consumer: info.consumer,
      subject: info.subject,
      streamSeq: info.streamSeq,
      code: info.reason,
      reason: redactText(info.errorMessage),
      payload:
        typeof info.payload === 'string' ? redactText(info.payload) : JSON.stringify(redactSecrets(info.payload)),
    });
  };

  async stop(): Promise<void> {
    await this.relay.stop().catch(() => undefined);
    await this.nc.drain().catch(() => undefined);
    await this.db.close().catch(() => undefined);
  }
}
