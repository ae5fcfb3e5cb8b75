// The services' entry. The operator's queries (listing, retention, erasure, health; the `ratchet` CLI)
// are not part of it: they have their own entry, `@ratchet/adapters/operator` (src/operator.ts).
export { connectNats, redactNatsUrl, type ConnectNatsOptions, natsServersAndAuth } from './nats/connect';
export {
  CONSUMER_NAMES,
  declareTopology,
  deleteTopology,
  ensureTopology,
  findConsumer,
  TopologyError,
  type ConsumerName,
  type ConsumerSpec,
  type EnsureResult,
  type StreamSpec,
  type Topology,
  type TopologyConfig,
} from './nats/jetstream.topology';
export {
  JetStreamPublisher,
  type JetStreamPublisherOptions,
  type MessagePublisher,
  type PublishOptions,
  type PublishResult,
} from './nats/jetstream.publisher';
export { consume, type ConsumeOptions, type ConsumerHandle, type FairShareOptions } from './nats/jetstream.consumer';
export {
  defaultRetryDelay,
  headersToRecord,
  type ConsumedMessage,
  type MessageHandler,
  type PoisonInfo,
} from './nats/jetstream.settle';
export { isParseFailure, retryDecision } from './nats/failure-classification';
export { ScriptedModel } from './models/scripted.model';
export {
  OPENAI_DEFAULT_BASE_URL,
  OpenAiCompatibleModel,
  type FetchInit,
  type FetchLike,
  type FetchResponseLike,
  type OpenAiCompatibleModelOptions,
  type SecretResolver,
} from './models/openai.model';
export { compileUserPattern, UserPatternError, type UserPattern } from './models/user-pattern';
export {
  AgentDefinitionError,
  agentDigest,
  loadAgentDirectory,
  parseAgentDefinition,
} from './agents/agent-files.loader';
export {
  AgentDefinitionsRepository,
  AgentNameTakenError,
  SHARED_AGENT_OWNER,
  type AgentScope,
  type StoredAgent,
} from './agents/agent-definitions.repository';
export { TenantSlotLimitsRepository, type TenantSlotLimit } from './agents/tenant-slot-limits.repository';
export {
  TenantAgentSettingsRepository,
  type AgentSettings,
  type AgentSettingsChange,
  type TenantAgentSettings,
} from './agents/tenant-agent-settings.repository';
export {
  DatabaseUnavailableError,
  openDatabase,
  redactUrl,
  type Database,
  type MigrationClass,
  type OpenDatabaseOptions,
} from './postgres/orm';
export {
  inTransaction,
  isoColumn,
  quoteIdent,
  sqlExecutor,
  valuesList,
  type SqlExecutor,
  type TransactionSql,
} from './postgres/sql';
export {
  APPROVALS_MIGRATIONS,
  GATEWAY_MIGRATIONS,
  MEMORY_MIGRATIONS,
  ORCHESTRATOR_MIGRATIONS,
  SERVICE_SCHEMAS,
  TOOLS_MIGRATIONS,
  type ServiceName,
} from './postgres/migrations/index';
export { claimInbox, enqueueOutbox } from './postgres/inbox-outbox.sql';
export { recordFailure, type FailedMessage } from './postgres/failed-messages.repository';
export { assertContiguous, listRuns, PgThreadStore, type ThreadColumnsMapper } from './postgres/pg-thread-store';
export { PgOutboxStore } from './postgres/pg-outbox.store';
export { withServiceTx, type ServiceTx } from './postgres/pg-service-tx';
export { EffectLedgerRepository } from './postgres/effect-ledger.repository';
export {
  type EffectHolder,
  type EffectRecord,
  type EffectResolution,
  type EffectState,
  type StartEffect,
} from './postgres/effect-ledger.records';
export { threadEffects, type ThreadEffectsSummary } from './postgres/effect-ledger.summary';
export { ApiKeyRepository, hashApiKey, type ApiKeyRecord, type CreateApiKey } from './postgres/api-key.repository';
export {
  JwtRevocationsRepository,
  type AddJwtRevocation,
  type JwtRevocationRecord,
} from './postgres/jwt-revocations.repository';
export { openServiceDatabase } from './postgres/service-database';
export { PgContentKeys } from './postgres/thread-keys.repository';
export { ContentSeal, type RawEvent } from './keys/content-seal';
export type { OnSealed } from './keys/sealed-content';
export {
  FileKeyWrapper,
  KeyFileError,
  masterKeyFromFile,
  newMasterKey,
  readKeyFile,
  writeKeyFile,
  type KeyFileContent,
} from './keys/key-file';
export {
  decodeListCursor,
  encodeListCursor,
  erasureSubjectHash,
  InvalidCursorError,
  MemoryItemsRepository,
  type ListPosition,
} from './postgres/memory-items.repository';
export {
  ApprovalsRepository,
  type ApprovalDecisionRecord,
  type ApprovalFilter,
  type ApprovalKindValue,
  type ApprovalRecord,
  type ApprovalStatusValue,
  type AuditEntry,
  type AuditRecord,
  type DecisionValue,
  type NewApproval,
} from './postgres/approvals.repository';
export { EVENT_COLUMNS, rowToEvent, type EventRow, type StoredEvent } from './postgres/thread-event.rows';
export {
  decodeCursor,
  encodeCursor,
  getRun,
  getThread,
  listThreadPage,
  readEventPage,
  decodeRunCursor,
  searchRunPage,
} from './postgres/threads.queries';
export { usageReport } from './postgres/model-usage.queries';
export {
  admissionCandidates,
  expiredQueuedRuns,
  noteSlotTurns,
  pruneSlotTurns,
  runAdmissionFacts,
  supersededRuns,
  type AdmissionCandidate,
  type ExpiredQueuedRun,
  type RunAdmissionFacts,
  type SupersededRun,
} from './postgres/runs-in-flight.queries';
export { activeRunsOfPrincipal, type RunOfPrincipal } from './postgres/revoked-principal.queries';
export { ModelCallLeases, type ModelCallClaim, type ModelCallRef } from './postgres/model-call-leases';
export {
  ModelLimitAdmissions,
  type AdmissionRequest,
  type LimitAnswer,
  type LimitOptions,
} from './postgres/model-limit-admissions';
export {
  TenantCapCounters,
  TenantCapsRepository,
  type CapAnswer,
  type CapReservation,
  type TenantCapsChange,
  type TenantCapsRow,
} from './postgres/tenant-caps';
export {
  IdempotencyKeysRepository,
  type HeldKey,
  type KeyClaim,
  type KeyClaimResult,
} from './postgres/idempotency-keys.repository';
export {
  activeRuns,
  claimDueSchedules,
  recordTickDecision,
  SchedulesRepository,
  type ScheduleTickRecord,
  type StoredSchedule,
} from './postgres/schedules.repository';
export {
  WebhookDeliveriesRepository,
  type WebhookDelivery,
  type WebhookSecrets,
} from './postgres/webhook-deliveries.repository';
export { InMemoryThreadStore } from './memory/in-memory-thread-store';
export { MemoryClient, type MemoryClientOptions } from './memory-client/memory.client';
export {
  forbiddenAddress,
  resolvedWebhookProblem,
  webhookUrlProblem,
  type WebhookAddressPolicy,
} from './webhooks/webhook-address';
export {
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  WEBHOOK_HEADERS,
  signatureHeader,
} from './webhooks/webhook-signature';
export {
  findErasureTombstones,
  removeThreadEverywhere,
  removeThreadMemory,
  threadErasureHash,
  writeErasureTombstone,
  type RemovalCounts,
  type ThreadKeyDisposal,
} from './postgres/erasure.queries';
export {
  lockThread,
  type ThreadSnapshot,
  listIdleThreads,
  listTenantsWithThreads,
  readSnapshot,
  saveSnapshotAndTrim,
} from './postgres/retention.queries';
export { type ThreadKey, readThreadColumns } from './postgres/operator-threads.queries';
export {
  claimHousekeepingJob,
  ensureHousekeepingJob,
  pruneInboxes,
  pruneIdempotencyKeys,
  pruneScheduleTicks,
  pruneWebhookDeliveries,
  recordHousekeeping,
  pruneFailedMessages,
} from './postgres/housekeeping.queries';
