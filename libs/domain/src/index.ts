export {
  ConcurrencyError,
  InvariantError,
  PoisonMessageError,
  RatchetError,
  retryOf,
  TransientError,
  type Retry,
} from './ports/errors';
export type {
  ClaimedThread,
  ClaimItem,
  CommittedPublisher,
  PendingMarks,
  OutboxMessage,
  OutboxStore,
  PendingOutboxMessage,
  RunRow,
  ThreadMessages,
  ThreadProjectionRow,
  ThreadStore,
  ThreadTx,
} from './ports/persistence';
export type { ModelDelta, ModelProvider, ModelRequest } from './ports/model';
export type { Clock, IdSource } from './ports/clock';
export {
  ContentSealedError,
  describeAbsence,
  type ContentKeys,
  type DataKey,
  type KeyAbsence,
  type KeyWrapper,
} from './ports/content-keys';
export {
  initialThreadState,
  openCalls,
  settlingCalls,
  threadStatus,
  type ActiveRun,
  type CallStatus,
  type CallWaitpoint,
  type PendingCall,
  type RunEnding,
  type RunSummary,
  type RunTicket,
  type SettlingCall,
  type ThreadState,
  type ThreadStatus,
} from './thread/thread.state';
export {
  NO_DECISION,
  type ApprovalNeed,
  type CancelRun,
  type Decision,
  type ExpireQueuedRun,
  type ExpireRun,
  type KnownRequest,
  type ModelOutcome,
  type Outgoing,
  type RecordApprovalDecision,
  type RecordModelAttempt,
  type RecordModelWait,
  type RecordModelResult,
  type RecordToolResult,
  type RecordWaitpointDecision,
  type RequestRun,
  type AdmitRun,
  type ResumeRun,
  type ThreadCommand,
  type ToolOutcome,
} from './thread/thread.commands';
export { evolve, foldEvents, messagesAdded } from './thread/thread.evolve';
export {
  foldRecord,
  liveRunSummary,
  recordFrom,
  recordOfSnapshot,
  runSummaryAfter,
  snapshotStateOf,
  type SnapshotState,
  type ThreadRecord,
} from './thread/thread.record';
export {
  decide,
  idempotencyKeyOf,
  MAX_MODEL_ATTEMPTS,
  modelAttemptsOf,
  baseModelCommandId,
  modelCommandId,
  waitedCommandId,
  modelRetryDelayMs,
  toolCommandId,
} from './thread/thread.decider';
export { diffProjections } from './thread/projection.diff';
export { runRowsOf, threadColumns } from './thread/thread.projection-rows';
export { canonicalJson } from './thread/canonical-json';
export { approxTokens, boundContext, type ContextBounds } from './thread/context-window';
export { afterSpending, beforeModelCall, spentOf, timeBudget, type BudgetBreach } from './thread/run.budget';
export { waitOf, workingMs, type RunWait, type WaitKind } from './thread/run.waits';
export {
  decideEffect,
  prepareEffect,
  type EffectAction,
  type EffectKind,
  type EffectPreparation,
  type LedgerState,
} from './effects/effect.decider';
export {
  mayChange,
  mayForget,
  mayRead,
  mayUseNamespace,
  MEMORY_ADMIN_ROLE,
  MEMORY_ROLES,
  principalSegment,
  readScope,
  type MemoryAccess,
  type ReadScope,
} from './memory/memory.access';
export {
  decideDelete,
  decideForget,
  decideGet,
  decidePut,
  type DeleteDecision,
  type GetDecision,
  type MemoryRules,
  type PutDecision,
  type WriteGuard,
} from './memory/memory.decider';
export { memoryFailure } from './memory/memory.errors';
export {
  checkLimits,
  DEFAULT_MEMORY_LIMITS,
  utf8Length,
  type MemoryLimits,
  type SizedInput,
} from './memory/memory.limits';
export {
  expiryOf,
  isExpired,
  namespaceWithin,
  refreshedExpiry,
  retentionFor,
  type RetentionPolicy,
} from './memory/memory.retention';
export { flattenValue, truncateUtf8 } from './memory/memory.text';
export { REDACTED, redactSecrets, redactText, configureRedaction } from './redaction/redact';
export {
  findUnstorable,
  MAX_JSON_DEPTH,
  storableText,
  textProblem,
  type Unstorable,
  type UnstorableProblem,
} from './payload/storable';
export {
  choicesOf,
  decideApproval,
  maySee,
  seesAll,
  verifyUse,
  type ApprovalFacts,
  type Decider,
  type DecisionOutcome,
  type RecordedDecision,
  type UseRequest,
} from './approvals/approval.decider';
export {
  completeWaitpoint,
  storedResult,
  type CompletionOutcome,
  type WaitpointCompletion,
  type WaitpointFacts,
  type WaitpointRefusal,
} from './approvals/waitpoint.decider';
export {
  MAX_CATCH_UP,
  type CatchUpPolicy,
  type OverlapPolicy,
  type Schedule,
  type ScheduleTiming,
  type ThreadPolicy,
} from './schedules/schedule';
export {
  assertTimeZone,
  InvalidTimingError,
  MIN_INTERVAL_MS,
  tickClock,
  type TickClock,
} from './schedules/schedule.timing';
export {
  decideTicks,
  freshCursor,
  scheduleThreadId,
  tickRequestId,
  type ScheduleDecision,
  type TickContext,
  type TickDecision,
  type TickRunRequest,
} from './schedules/schedule.decider';
export { scheduleProblems } from './schedules/schedule.rules';
export {
  afterAttempt,
  DEFAULT_WEBHOOK_RETRY,
  type AfterAttempt,
  type AttemptResult,
  type WebhookRetryPolicy,
} from './webhooks/webhook.retry';
export {
  watchdogAction,
  type ModelCallRow,
  type RunCandidate,
  type WatchdogAction,
  type WatchdogLimits,
} from './watchdog/stalled-runs';
export { type LedgerSnapshot, ledgerWrite } from './effects/effect.transition';
export {
  type HousekeepingDecision,
  type HousekeepingSettings,
  type HousekeepingTask,
  decideHousekeeping,
} from './housekeeping/housekeeping.decider';
export { decideErasure, type ErasureDecision, type ErasureFacts } from './thread/thread-erasure.rule';
export {
  admit,
  estimateCallTokens,
  fitsAt,
  takeTurn,
  type Admission,
  type AdmissionDecision,
  type AdmissionQuery,
  type LimitBound,
  type LimitWindow,
  type OwnAdmission,
  type ProviderLimit,
  type Turn,
  type TurnWrite,
} from './flow/provider-limits';
export { runSlotsOf, type SlotKeyMissing } from './flow/run-slots';
export { costMicros, priceOf, type ModelPrice, type PriceTable } from './flow/model-prices';
export {
  capRefusalCode,
  capRefusalMessage,
  capReservation,
  capReservationCost,
  hasCaps,
  reserveUnderCaps,
  TENANT_CAP_CODE,
  TENANT_COST_CAP_CODE,
  units,
  type CapCounts,
  type CapDecision,
  type CapName,
  type CapNeeds,
  type TenantCaps,
} from './flow/tenant-caps';
export { runThrottleOf, type ThrottleKeyMissing } from './flow/run-throttle';
export { runDebounceOf, type DebounceKeyMissing } from './flow/run-debounce';
export { PRIORITY_ROLE, runPriorityOf, type PriorityForbidden } from './flow/run-priority';
