export { ConfigError, EX_CONFIG, formatConfigIssues, type ConfigIssue } from './config/config-error';
export {
  envBoolean,
  envEnum,
  envInt,
  envMillis,
  envPort,
  envString,
  envToken,
  envUrl,
  envUrlList,
} from './config/env-fields';
export {
  baseConfigSchema,
  configFields,
  DEFAULT_DATABASE_URL,
  DEFAULT_NATS_URL,
  DEFAULT_SUBJECT_PREFIX,
  extendConfig,
  gatewayConfigSchema,
  LOG_LEVELS,
  workerConfigSchema,
  type BaseConfig,
  type GatewayConfig,
  type WorkerConfig,
} from './config/base-config';
export { loadConfig, parseConfig, type ConfigResult, type Env } from './config/load-config';
export { exitOnConfigError, type ExitIo } from './config/exit-on-config-error';
export { CLOCK, newId, randomIds, runIdFor, systemClock, threadIdFor } from './ids/ids';
export { JetStreamContext } from './jetstream/jetstream.context';
export { JetStreamExceptionFilter } from './jetstream/jetstream.exception-filter';
export { ConsumesOnItsSubject, OnItsSubject } from './jetstream/on-its-subject';
export {
  JETSTREAM_TRANSPORT,
  JetStreamServer,
  type JetStreamServerEvents,
  type JetStreamServerOptions,
} from './jetstream/jetstream.transport';
export { OutboxRelay, type OutboxRelayOptions } from './outbox/outbox.relay';
export { createLogger, logScope, scopeOf, type Logger, type LogScope } from './service/logger';
export { CORE_PUBLISH_HEADER, RoutingPublisher } from './service/routing.publisher';
export { ServiceRuntime, type RuntimeConfig, type RuntimeOptions } from './service/service-runtime';
export { HealthController, MetricsController, Readiness } from './service/health.controller';
export { RuntimeModule } from './service/runtime.module';
export { startService, type StartServiceOptions } from './service/start-service';
export { runMain } from './service/run-main';
export { topologyFromConfig, type TopologySettings } from './service/topology';
export { RATCHET_VERSION } from './service/version';
export { readRunStop, RunStoppedError, RunStops } from './service/run-stops';
export { InFlight, serveRequests } from './service/serve-requests';
export { RequestResponder, TenantRequestResponder } from './service/request-responder';
export { LeaseRenewal } from './service/lease-renewal';
export { failpoint } from './failpoints/failpoints';
export { ATTR, LINK, SPAN, toolCallAttributes, genAiProviderName } from './telemetry/attributes';
export {
  contentCaptureEnabled,
  meter,
  serveMetrics,
  startTelemetry,
  toolDuration,
  tracer,
  type TelemetryHandle,
} from './telemetry/telemetry';
export {
  activeSpanRecording,
  contextFromHeaders,
  currentTraceContext,
  inSpan,
  linkActiveSpan,
  linkTo,
  newTraceContext,
  recordSpan,
  spanContextOf,
  traceIdOf,
} from './telemetry/spans';
export {
  type CompactOutcome,
  addCounts,
  compactThread,
  eventsStream,
  inTransaction,
  nonZero,
  purgeThreadSubject,
  threadFeedSubjects,
  removeThreadRows,
  total,
} from './retention/thread-retention';
export {
  RETENTION_VARIABLE,
  type RetentionPolicy,
  type RetentionRule,
  parseAge,
  parseRetentionPolicy,
  ruleFor,
} from './retention/retention-policy';
export { type RetentionResult, applyRetention } from './retention/apply-retention';
export {
  type ThreadLog,
  type Verification,
  canonicalJsonStrings,
  foldLog,
  logVersionOf,
  readSnapshotIn,
  readThreadLog,
  rebuildThread,
  runRowsOfLog,
  threadStore,
  verifyThread,
} from './retention/thread-projection';
export { eraseThread, type ThreadErasure } from './retention/thread-erasure';
