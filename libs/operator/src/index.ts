// The operator's commands: what each `ratchet` command does once its arguments are parsed (apps/cli keeps
// the argument wiring). See docs/adr/0036-apps-are-wiring.md.
export { assignAgent, listAgents } from './commands/agents';
export { listSlotLimits, setSlotLimit, unsetSlotLimit, type SlotLimitTarget } from './commands/slot-limits';
export { changeAgentSettings, listAgentSettings } from './commands/agent-settings';
export { decideApproval, listApprovals, type ApprovalsListOptions } from './commands/approvals';
export {
  completeWaitpoint,
  listWaitpoints,
  type CompleteWaitpointOptions,
  type WaitpointsListOptions,
} from './commands/waitpoints';
export { DEFAULT_DEMO_MESSAGE, DEMO_AGENT, runDemo, type DemoOptions, type DemoResult } from './commands/demo';
export { differences, doctor, type Check, type DoctorOptions } from './commands/doctor';
export {
  joinEffects,
  resolveEffect,
  showEffects,
  type EffectView,
  type EffectsOptions,
  type ResolveOptions,
} from './commands/effects';
export { erase, type EraseOptions, type EraseReport, type MemoryPath } from './commands/erase';
export { showEvents, type EventsOptions } from './commands/events';
export { exportThreads, type ExportOptions } from './commands/export';
export { fork, type ForkOptions } from './commands/fork';
export { importThreads, type ImportOptions, type ImportOutcome } from './commands/import';
export { showInbox, type InboxOptions, type InboxReport } from './commands/inbox';
export { createKey, listKeys, revokeKey, type KeysCreateOptions } from './commands/keys';
export { SERVICE_NAMES, migrate, type MigrateOptions, type MigrateReport } from './commands/migrate';
export { printFailures, showOutbox, type OutboxOptions, type OutboxReport } from './commands/outbox';
export { rebuild, type RebuildOptions } from './commands/rebuild';
export { replay, type ReplayOptions } from './commands/replay';
export { retentionRun, type RetentionOptions, type RetentionResult } from './commands/retention';
export { RUN_STATUSES, RUN_WAITS, cancelRun, showRuns, type RunsListOptions } from './commands/runs';
export {
  SCHEDULE_PRINCIPAL,
  createSchedule,
  deleteSchedule,
  listSchedules,
  setSchedulePaused,
  type ScheduleCreateOptions,
} from './commands/schedules';
export { streamCheck, type StreamCheckOptions } from './commands/stream-check';
export { showThreads, type ThreadsOptions } from './commands/threads';
export {
  WEBHOOK_STATUSES,
  parseOverlap,
  showWebhookDeliveries,
  webhookSecret,
  type WebhookSecretOptions,
  type WebhooksOptions,
} from './commands/webhooks';
export { showUsage, type UsageOptions } from './commands/usage';
export { changeCaps, listCaps, parseCostAmount } from './commands/caps';
export {
  DEFAULT_TENANT,
  GLOBAL_ENV_OPTIONS,
  LOCAL_DEMO_API_KEY,
  cliConfigSchema,
  loadCliConfig,
  type CliConfig,
  type GlobalOptions,
} from './config';
export { assertToken, openSchema, plural, resolveTenant, withNats, withSchema, type CommandContext } from './context';
export { CliError, EXIT, PG, UsageError, pgCode } from './errors';
export { waitForRunEnd, type RunEndWait, type WaitForRunEndOptions } from './event-feed';
export { formatAge, table } from './format';
export { call, gateway, type Gateway, type GatewayOptions } from './gateway';
export {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  EXPORT_FORMAT_VERSION_SNAPSHOTS,
  parseExport,
  parseTenantMap,
  type ExportHeader,
  type ExportedSnapshot,
  type ParsedExport,
} from './ops/export-format';
export { followFeed } from './ops/feed-follow';
export {
  RETENTION_VARIABLE,
  parseRetentionPolicy,
  ruleFor,
  type RetentionPolicy,
  type RetentionRule,
} from './ops/retention-policy';
export { compareStream, isClean, type StreamComparison } from './ops/stream-compare';
export { readStream, streamInfo, type FeedMessage } from './ops/stream-read';
export { planFork, type ForkIds, type ForkPlan } from './ops/thread-fork';
export { notIdleReason } from './ops/thread-idle';
export { keyOf, selectThreads, type SelectionOptions } from './ops/thread-selection';
export { askOrchestrators } from './orchestrator-request';
export { colourEnabled, processOutput, type Output } from './output';
export { ensureDatabase, type EnsureDatabaseResult } from './postgres-admin';
export { progressBar, type Progress } from './progress';
export { readThreadEvents } from './thread-log';
export {
  RESUME_MARK,
  RETRY_MARK,
  clock,
  formatTimeline,
  truncate,
  type Style,
  type Styler,
  type TimelineOptions,
} from './timeline/format-timeline';
export {
  initMasterKey,
  retireMasterKey,
  rewrapDataKeys,
  rotateMasterKey,
  type MasterKeyFileOptions,
} from './commands/master-key';
