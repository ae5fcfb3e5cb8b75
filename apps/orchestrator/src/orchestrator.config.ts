import path from 'node:path';
import { z } from 'zod';
import { configFields, envBoolean, envInt, envMillis, envPort, envString, extendConfig } from '@ratchet/platform';
import { housekeepingConfigFields } from './housekeeping/housekeeping.config';
import { DEMO_MODEL_PRICES, envModelPrices } from './models/model-prices.config';
import { providerLimitConfigFields } from './models/provider-limits.config';

export const orchestratorConfigSchema = extendConfig({
  /** The master key file that seals threads' content at rest (docs/security.md#content-at-rest). */
  RATCHET_KEY_FILE: configFields.RATCHET_KEY_FILE,
  /** Health probes; each service has its own default so all of them fit on one machine. */
  HEALTH_PORT: envPort().default(9091),
  /** Agent definitions (YAML/JSON) registered at start; unchanged files make no new version. */
  AGENTS_DIR: envString().default(path.resolve(__dirname, '../../../agents')),
  /** Each orchestrator process also runs a model worker unless this is false. */
  MODEL_WORKER: envBoolean().default(true),
  /** No longer read here (the tool executor's catalog answers for remote tools); a warning if set. */
  REMOTE_TOOLS: z.string().default(''),
  /** Modules exporting `defineTool` tools (the same list as the tool executor's): their `local` tools run here. */
  TOOL_MODULES: z.string().default(''),
  /** At start, how long AGENTS_DIR agents that list the executor's tools wait for its catalog to answer. */
  AGENTS_TOOLS_WAIT_MS: envMillis().default(30_000),
  /** How often the watchdog looks for runs with no progress, and the idle time before it looks at one. */
  WATCHDOG_INTERVAL_MS: envMillis().default(5_000),
  WATCHDOG_MIN_IDLE_MS: envMillis().default(10_000),
  /**
   * A published model call that no worker took for this long (and at least its agent's step budget) is
   * presumed lost with its message: the watchdog fences it and commands the next attempt. Waiting behind
   * busy workers is not a stall, so this is generous.
   */
  WATCHDOG_LOST_AFTER_MS: envMillis().default(600_000),
  /** Runs the watchdog looks at per pass, the longest idle first (runs waiting for a human are not among them). */
  WATCHDOG_BATCH: envInt({ min: 1, max: 100_000 }).default(100),
  /**
   * Model calls this process's model worker takes off the bus at once. A call waiting on a provider costs
   * a socket and its prompt, not CPU, so the default serves thousands of runs in flight (docs/models.md).
   */
  MODEL_CONCURRENCY: envInt({ min: 1, max: 20_000 }).default(1000),
  /**
   * Model calls this process runs itself right after committing them, instead of sending them through the
   * bus (their outbox rows are leased to it; see ADR 0008); beyond this many at once, or with 0, model
   * calls go through the bus. Needs MODEL_WORKER.
   */
  MODEL_LOCAL_CALLS: envInt({ min: 0, max: 100_000 }).default(10_000),
  /** Provider limits shared by every orchestrator (docs/flow-control.md): MODEL_LIMITS, its guard and retry. */
  ...providerLimitConfigFields,
  /** Run requests decided at once (admission). */
  REQUEST_CONCURRENCY: envInt({ min: 1, max: 1000 }).default(64),
  /**
   * Run `local` tools (pure, cheap, no I/O; see docs/tools.md) in this process, inside the decision that
   * calls them (ADR 0010). false: every tool call goes to the tool executor.
   */
  LOCAL_TOOLS: envBoolean().default(true),
  /** Thread-inbox messages (model and tool results, cancels) handled at once. */
  INBOX_CONCURRENCY: envInt({ min: 1, max: 1000 }).default(64),
  /**
   * The share of REQUEST_CONCURRENCY, INBOX_CONCURRENCY and MODEL_CONCURRENCY one tenant's messages may use
   * at once, in percent (docs/security.md#fair-shares): what is left is there for other tenants at once,
   * however many messages one tenant queued ahead of them. A tenant alone may use every slot; 0 turns fair
   * shares off (first come, first served). The same share of MODEL_LOCAL_CALLS bounds one tenant's local
   * model calls (the rest go through the bus).
   */
  TENANT_SHARE_PERCENT: envInt({ min: 0, max: 100 }).default(50),
  /**
   * The most runs one tenant may have queued or running at once (docs/security.md#runs-in-flight): a run
   * request past it is refused as `tenant.runs_limit` (retryable) and recorded on the thread it named.
   * Exact: a tenant's run requests are decided one transaction at a time on every orchestrator (ADR 0045).
   * 0: no bound.
   */
  TENANT_MAX_ACTIVE_RUNS: envInt({ min: 0, max: 10_000_000 }).default(1000),
  /**
   * What a run request past TENANT_MAX_ACTIVE_RUNS gets (docs/flow-control.md#runs-in-flight): `refuse` —
   * `tenant.runs_limit`, retryable; `queue` — accepted, and queued for admission (`run.queued` with
   * `waitingFor`, status `queued` waiting on `admission`), started oldest first, one thread's runs in their
   * order, by the admission pass when the tenant has room (ADR 0045).
   */
  TENANT_RUNS_OVER_BOUND: z.enum(['refuse', 'queue']).default('refuse'),
  /** How often the admission pass looks for held runs the tenant has room for (TENANT_RUNS_OVER_BOUND=queue). */
  ADMISSION_PASS_MS: envMillis().default(500),
  /**
   * The most runs one tenant may have waiting for a human at once (an approval, an operator deciding an
   * uncertain effect): waiting runs use no worker and leave the runs in flight, so this bound is generous.
   * While a tenant has that many, a new run is refused as `tenant.waiting_runs_limit` (retryable). 0: no bound.
   */
  TENANT_MAX_WAITING_RUNS: envInt({ min: 0, max: 10_000_000 }).default(10_000),
  /**
   * How long a tenant's token caps (docs/flow-control.md#token-and-cost-caps) are kept in memory before they are
   * read again: a cap an operator sets or raises holds on every orchestrator within this.
   */
  TENANT_CAPS_CACHE_MS: envMillis().default(1000),
  /**
   * Prices per million tokens by model name (docs/flow-control.md#prices-and-cost): each answer's cost is
   * recorded with its usage. Default: a price for the demo's scripted model only.
   */
  MODEL_PRICES: envModelPrices().default(DEMO_MODEL_PRICES),
  /**
   * The answer a capped tenant's model call reserves when its agent bounds none (`max_tokens` or
   * `max_completion_tokens`); such a call asks the provider for at most this many (`max_completion_tokens`).
   */
  TENANT_CAP_MAX_OUTPUT_TOKENS: envInt({ min: 1, max: 1_000_000 }).default(4096),
  /** How often the schedule ticker looks for due ticks (docs/schedules.md); 0 turns the ticker off here. */
  SCHEDULES_TICK_MS: envMillis().default(1000),
  /** A tick at most this late is on time; a later one was missed and follows its schedule's catch-up policy. */
  SCHEDULES_GRACE_MS: envMillis().default(60_000),
  /**
   * Allow webhooks to loopback and private addresses (tests, receivers inside the cluster). Off by
   * default: a tenant could otherwise make the deployment call its own internal services.
   */
  WEBHOOK_ALLOW_PRIVATE: envBoolean().default(false),
  /** Attempts per webhook delivery, the first included; then it is recorded dead (docs/webhooks.md). */
  WEBHOOK_MAX_ATTEMPTS: envInt({ min: 1, max: 100 }).default(8),
  /** The delay before a delivery's second attempt; each later one doubles it (at most 5 min), with jitter. */
  WEBHOOK_BASE_DELAY_MS: envMillis().default(1000),
  /** How long one attempt waits for the receiver's answer. */
  WEBHOOK_TIMEOUT_MS: envMillis().default(10_000),
  /**
   * Test-only: the schedule ticker's clock runs this far ahead of the system clock (a negative value:
   * behind), so a test can step time forward. Never set it in a deployment.
   */
  RATCHET_TEST_CLOCK_OFFSET_MS: envInt().default(0),
  /** Messages of different threads decided in one transaction at most (group commit); 1 turns it off. */
  GROUP_COMMIT_MAX: envInt({ min: 1, max: 1000 }).default(32),
  /** Built-in housekeeping (retention and pruning on a schedule; docs/runbooks/retention.md). */
  ...housekeepingConfigFields,
  /** How often this process looks whether a housekeeping tick is due (it asks the database only then). */
  HOUSEKEEPING_CHECK_MS: envMillis().default(30_000),
});
export type OrchestratorConfig = z.output<typeof orchestratorConfigSchema>;
