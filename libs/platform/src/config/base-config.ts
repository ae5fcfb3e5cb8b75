import { hostname } from 'node:os';
import { z } from 'zod';
import {
  envEnum,
  envInt,
  envMillis,
  envPatternList,
  envPort,
  envString,
  envToken,
  envUrl,
  envUrlList,
} from './env-fields';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ratchet';
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
export const DEFAULT_SUBJECT_PREFIX = 'ratchet';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Shared field schemas: every service reads these the same way. */
export const configFields = {
  DATABASE_URL: envUrl(['postgres:', 'postgresql:'], 'expected a postgres:// URL').default(DEFAULT_DATABASE_URL),
  /** One server or a comma-separated list of seed servers. */
  NATS_URL: envUrlList(
    ['nats:', 'tls:', 'ws:', 'wss:'],
    'expected a nats:// URL or a comma-separated list of them',
  ).default(DEFAULT_NATS_URL),
  /** Prefix of every subject (`<prefix>.requests.<tenant>` …), so environments can share one server. */
  RATCHET_SUBJECT_PREFIX: envToken().default(DEFAULT_SUBJECT_PREFIX),
  /** Prefix of stream and consumer names; unset means the subject prefix in upper case. */
  RATCHET_STREAM_PREFIX: envToken().optional(),
  LOG_LEVEL: envEnum(LOG_LEVELS).default('info'),
  /** Names this process in traces, logs and consumer heartbeats. */
  SERVICE_INSTANCE_ID: envString().default(() => `${hostname()}-${process.pid}`),
  /** How long shutdown waits for in-flight messages before the process exits. */
  SHUTDOWN_GRACE_MS: envMillis().default(10_000),
  /** How long JetStream waits for an ack before redelivering: the time a crashed worker's messages
   *  stay stuck. Long handlers heartbeat (`working()`) every third of it. */
  RATCHET_ACK_WAIT_MS: envMillis().default(15_000),
  /** JetStream drops a second publish with the same Nats-Msg-Id within this window; consumers' inbox
   *  tables dedup forever after it. */
  RATCHET_DUPLICATE_WINDOW_MS: envMillis().default(120_000),
  /** Replicas of every stream (3 on a clustered JetStream in production). */
  RATCHET_STREAM_REPLICAS: envInt({ min: 1, max: 5 }).default(1),
  /** Read by the OTel SDK itself; validated here so a typo stops the service instead of dropping traces. */
  OTEL_EXPORTER_OTLP_ENDPOINT: envUrl(['http:', 'https:'], 'expected an http(s):// URL').optional(),
  /** Port of `GET /health/live` and `/health/ready` for services without an HTTP API of their own. */
  HEALTH_PORT: envPort().default(9090),
  GATEWAY_PORT: envPort().default(8080),
  GATEWAY_HOST: envString('expected a host name or IP address').default('0.0.0.0'),
  /** Seeds one API key at boot for local development; never set it in production. */
  GATEWAY_BOOTSTRAP_API_KEY: envString().min(16, { error: 'expected at least 16 characters' }).optional(),
  GATEWAY_BOOTSTRAP_TENANT: envToken().default('demo'),
  /**
   * The deployment's own redaction patterns (a JSON array of regular expressions), applied with the
   * built-in ones wherever data enters: run input and metadata, tool results, refused messages.
   */
  RATCHET_REDACT_PATTERNS: envPatternList().default([]),
  /**
   * The master key file (`ratchet keys init`; mode 0600, outside the database and the streams) that wraps
   * the threads' data keys: with it, thread content is sealed at rest and on the event feed
   * (docs/security.md#content-at-rest). Every process that reads or writes threads needs the same file.
   */
  RATCHET_KEY_FILE: envString('expected the path of a key file').optional(),
};

const baseObject = z.object({
  DATABASE_URL: configFields.DATABASE_URL,
  NATS_URL: configFields.NATS_URL,
  RATCHET_SUBJECT_PREFIX: configFields.RATCHET_SUBJECT_PREFIX,
  RATCHET_STREAM_PREFIX: configFields.RATCHET_STREAM_PREFIX,
  LOG_LEVEL: configFields.LOG_LEVEL,
  SERVICE_INSTANCE_ID: configFields.SERVICE_INSTANCE_ID,
  SHUTDOWN_GRACE_MS: configFields.SHUTDOWN_GRACE_MS,
  RATCHET_ACK_WAIT_MS: configFields.RATCHET_ACK_WAIT_MS,
  RATCHET_DUPLICATE_WINDOW_MS: configFields.RATCHET_DUPLICATE_WINDOW_MS,
  RATCHET_STREAM_REPLICAS: configFields.RATCHET_STREAM_REPLICAS,
  OTEL_EXPORTER_OTLP_ENDPOINT: configFields.OTEL_EXPORTER_OTLP_ENDPOINT,
  RATCHET_REDACT_PATTERNS: configFields.RATCHET_REDACT_PATTERNS,
});

/** Defaults that depend on other variables are filled in after parsing. */
type Derived<T> = Omit<T, 'RATCHET_STREAM_PREFIX'> & { readonly RATCHET_STREAM_PREFIX: string };

/**
 * The base schema plus a service's own variables. A service variable with a base name replaces it.
 *
 * @example
 * const schema = extendConfig({ MEMORY_TTL_MS: envMillis().default(86_400_000) });
 * const config = loadConfig(schema, process.env, 'memory');
 */
export function extendConfig<S extends z.ZodRawShape>(shape: S) {
  const object = baseObject.extend(shape);
  return object.transform((parsed) => {
    const base = parsed as z.output<typeof baseObject>;
    const streamPrefix = base.RATCHET_STREAM_PREFIX ?? base.RATCHET_SUBJECT_PREFIX.toUpperCase();
    return { ...parsed, RATCHET_STREAM_PREFIX: streamPrefix } as Derived<z.output<typeof object>>;
  });
}

/** The variables every service reads. */
export const baseConfigSchema = extendConfig({});
export type BaseConfig = z.output<typeof baseConfigSchema>;

/** orchestrator, tool-executor, memory, approvals: the base plus their health port. */
export const workerConfigSchema = extendConfig({ HEALTH_PORT: configFields.HEALTH_PORT });
export type WorkerConfig = z.output<typeof workerConfigSchema>;

/** The gateway serves its health endpoints on its API port. */
export const gatewayConfigSchema = extendConfig({
  GATEWAY_PORT: configFields.GATEWAY_PORT,
  GATEWAY_HOST: configFields.GATEWAY_HOST,
  GATEWAY_BOOTSTRAP_API_KEY: configFields.GATEWAY_BOOTSTRAP_API_KEY,
  GATEWAY_BOOTSTRAP_TENANT: configFields.GATEWAY_BOOTSTRAP_TENANT,
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
