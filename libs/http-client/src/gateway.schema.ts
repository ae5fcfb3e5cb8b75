/**
 * The gateway's HTTP API as types, generated from docs/openapi.json by openapi-typescript.
 * Do not edit: `npm run docs:generate` writes it, and a test fails while it is stale.
 */

/** Any JSON value. Named here: as a recursive indexed access on `components` TypeScript refuses it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export interface paths {
  '/health/live': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Liveness: the process serves HTTP */
    get: operations['Health_live'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/health/ready': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Readiness: Postgres answers, migrations are applied, NATS is connected */
    get: operations['Health_ready'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/metrics': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Prometheus metrics: the gateway's OpenTelemetry instruments in the text format */
    get: operations['Metrics_scrape'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/agents': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the tenant's agents and the shared ones (latest versions) */
    get: operations['Agents_list'];
    put?: never;
    /**
     * Register one of the tenant's agent definitions
     * @description A new version only when the content changed: 201 with `created: true`, else 200 with the latest version. Its tools must be in the tenant's catalog (GET /v1/tools). A name the deployment offers as a shared agent is refused (409).
     */
    post: operations['Agents_register'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/agents/{name}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** An agent definition: the latest version, or `version` */
    get: operations['Agents_get'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/approvals': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The approvals and escalations you may see, newest first
     * @description Each one says whether you may decide it (`canDecide`: the approval names a role you hold, and you did not start the run when it asks for four eyes).
     */
    get: operations['Approvals_list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/approvals/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** An approval or escalation */
    get: operations['Approvals_get'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/approvals/{id}/decision': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Decide an approval (approve / reject) or an escalation (happened / retry / fail)
     * @description Recorded once, atomically with the event the run waits for. The approval must name a role you hold; with four eyes, whoever started the run cannot decide it.
     */
    post: operations['Approvals_decide'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/deployment/agents': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the shared agents (operator credential) */
    get: operations['DeploymentAgents_list'];
    put?: never;
    /**
     * Register a shared agent definition (operator credential)
     * @description Offered to every tenant (a tenant that owns an agent of the same name keeps using its own). Its tools must be offered to every tenant.
     */
    post: operations['DeploymentAgents_register'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/memory/items': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List memory items under a namespace prefix */
    get: operations['Memory_list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/memory/items/{namespace}/{key}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read a memory item */
    get: operations['Memory_get'];
    /**
     * Create or replace a memory item
     * @description 201 when created, 200 when replaced. `expectedVersion` makes it conditional (409 when it does not match).
     */
    put: operations['Memory_put'];
    post?: never;
    /** Delete a memory item */
    delete: operations['Memory_remove'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/memory/search': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Full-text search over memory items */
    get: operations['Memory_search'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/revocations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the tenant's JWT revocations, newest first */
    get: operations['Revocations_list'];
    put?: never;
    /**
     * Revoke JWTs of a subject
     * @description Every token of the subject, or only the one with `jti`, or only those issued before `issuedBefore` (both: a token must match both). Takes effect on the next request; approvals of the subject’s runs are rejected when they would run. Announced to the orchestrators: the subject’s queued and running runs stop at their next step (`run.cancelled`, reason `principal.revoked: …`; with `jti` or `issuedBefore`, only runs started before the entry) and, for the whole subject, its schedules pause (`pausedReason`).
     */
    post: operations['Revocations_add'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/revocations/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Remove a revocation (tokens it covered are accepted again) */
    delete: operations['Revocations_remove'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/runs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Search the tenant's runs, newest start first
     * @description Filters combine (all must hold). Runs not started yet (queued) come first and have no start time, so `since`/`until` leave them out. Pages follow `nextCursor`.
     */
    get: operations['Runs_search'];
    put?: never;
    /**
     * Start a run
     * @description On a new thread, or on `threadId` (a name within your tenant). The same Idempotency-Key always answers the same run and starts at most one.
     */
    post: operations['Runs_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/runs/{runId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A run: status, steps and, once it ended, its outcome */
    get: operations['Runs_get'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/runs/{runId}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Cancel a run
     * @description Publishes `run.cancel` to the thread inbox; the run ends with `run.cancelled` (open tool calls are closed with explicit results). 409 when the run already ended.
     */
    post: operations['Runs_cancel'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/runs/{runId}/outcome': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Wait for a run to end
     * @description Answers 200 with `done: true` as soon as the run has ended, or 202 with `done: false` when `waitSeconds` pass first (ask again).
     */
    get: operations['Runs_outcome'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/schedules': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the tenant's schedules */
    get: operations['Schedules_list'];
    put?: never;
    /**
     * Create a schedule
     * @description A cron expression in a time zone, or an interval. Each tick starts exactly one run (its requestId is `schedule:<id>:<tick time>`), acting as the caller.
     */
    post: operations['Schedules_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/schedules/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A schedule, with its latest ticks */
    get: operations['Schedules_get'];
    put?: never;
    post?: never;
    /** Delete a schedule (runs it started go on) */
    delete: operations['Schedules_remove'];
    options?: never;
    head?: never;
    /**
     * Pause, resume or change a schedule
     * @description `{"paused": true}` pauses; `{"paused": false}` resumes from now (ticks missed while paused are not caught up).
     */
    patch: operations['Schedules_update'];
    trace?: never;
  };
  '/v1/threads': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the tenant's threads, newest first */
    get: operations['Threads_list'];
    put?: never;
    /**
     * Create a thread by starting its first run
     * @description A thread comes into existence with its first run. The thread id is derived from the Idempotency-Key, so a retry answers the same thread and run.
     */
    post: operations['Threads_create'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/threads/{threadId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A thread's state and its runs */
    get: operations['Threads_get'];
    put?: never;
    post?: never;
    /**
     * Erase a thread from every store
     * @description Removes the thread in one transaction from every store — its event log, snapshot, projection, conversation and runs, its effect-ledger rows, its approvals with their decisions and audit rows, the outbox, inbox and failed-message rows naming it, and the memory items its runs wrote — leaving an audit tombstone (the tenant, a hash of the thread id, the counts, who erased it); then purges its messages from the EVENTS stream. Refused with 409 while a run of it is queued or running. Idempotent: erasing it again answers 200 with `erased: false`.
     */
    delete: operations['Threads_remove'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/threads/{threadId}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A page of the thread's event log, in version order */
    get: operations['Threads_events'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/threads/{threadId}/events/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Follow the thread's events live (Server-Sent Events)
     * @description Stored events after `Last-Event-ID` (or `after`), then live ones. Each message has `id` = the event version, `event` = its type and `data` = the event JSON. Reconnect with `Last-Event-ID` to resume without a gap; events are never repeated within a connection.
     */
    get: operations['Threads_stream'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/threads/{threadId}/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Follow the thread live: the model's answers as written, and its events (Server-Sent Events)
     * @description `mode` (comma-separated, default `messages,events`): `events` are the stored and live events of the thread, as on `/events/stream` (`id` = version; reconnect with `Last-Event-ID`); `messages` are the answers as the model writes them: `event: token` (`text`, `toolCalls` pieces, `runId`, `step`, `attempt`, `seq`) and `event: reset` when an attempt starts (drop what you had of that step: a retry, a worker that stopped mid-answer). Tokens have no id and are not replayed; the `model.responded` event that follows holds the text of record.
     */
    get: operations['Threads_live'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/tools': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The tenant's tool catalog */
    get: operations['Tools_list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/usage': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * What the tenant's model calls spent, by day, month, agent, model or run
     * @description Tokens as the providers reported them, for every model answer the log recorded (`model.responded`) in the window, and the calls the log shows made without their answer used (`abortedCalls`: a worker that stopped mid-call, an answer that came too late; they may have been billed, their tokens are unknown). Days and months are UTC; figures outlive the threads they came from.
     */
    get: operations['Usage_report'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/waitpoints': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The waitpoints of your tenant, oldest first
     * @description What runs wait for from the outside world; `status=pending` lists those still open. Any role of the tenant may list them (an approver sees only what its roles may complete).
     */
    get: operations['Waitpoints_list'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/waitpoints/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * A waitpoint, with the path of its signed callback URL
     * @description The path (null when the deployment configures no callback keys) completes this one waitpoint without a credential: hand it to the job that will finish, and keep it as secret as a key.
     */
    get: operations['Waitpoints_get'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/waitpoints/{id}/complete': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Complete a waitpoint with a result, or report that the job outside failed
     * @description Recorded once, atomically with the message that wakes the run. The same completion again answers as the first did and wakes nothing; another body is refused (409 `waitpoint.conflict`); so are an expired waitpoint (409 `waitpoint.expired`) and one whose run stopped (409 `waitpoint.closed`). A result that does not fit the schema the tool declared is refused (400 `waitpoint.invalid_result`, each problem named) and nothing is recorded.
     */
    post: operations['Waitpoints_complete'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/waitpoints/callback/{tenant}/{id}/{token}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Complete a waitpoint through its signed callback URL (no credential)
     * @description The body and answers are those of `POST /v1/waitpoints/{id}/complete`. A token that is not this waitpoint’s answers 404, as an unknown waitpoint does.
     */
    post: operations['Waitpoints_callback'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/webhooks/deliveries': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The tenant's webhook deliveries, newest first (`status=dead`: those that gave up) */
    get: operations['Webhooks_deliveries'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/webhooks/secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The tenant's webhook signing secret (made on first use), and the signature scheme */
    get: operations['Webhooks_secret'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/webhooks/secret/rotate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Rotate the tenant's webhook signing secret
     * @description Makes a new secret. The previous one keeps signing deliveries, next to the new one, for `overlapSeconds` (default a day): the signature header carries a `v1=` per secret, so receivers can move to the new secret at their pace.
     */
    post: operations['Webhooks_rotate'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    AgentList: {
      agents: {
        name: string;
        version: number;
        digest: string;
        /**
         * @description tenant: the caller's tenant owns it; shared: the deployment offers it to every tenant
         * @enum {string}
         */
        scope: 'tenant' | 'shared';
        definition: {
          name: string;
          /** @default  */
          description: string;
          /** @default  */
          instructions: string;
          model:
            | {
                /** @enum {string} */
                provider: 'scripted';
                /** @default scripted */
                name: string;
                script: {
                  /** @default {} */
                  when: {
                    /** @description Regular expression tested against the latest user message (named groups become template variables) */
                    user?: string;
                    /** @description true: only right after tool results; false: only when no tool result is pending */
                    afterTools?: boolean;
                    /** @description Only while the run is at a step lower than this */
                    stepBelow?: number;
                  };
                  /** @description Tool calls to make (in parallel); string values are templates */
                  call?: {
                    tool: string;
                    /** @default {} */
                    args: {
                      [key: string]: components['schemas']['JsonValue'];
                    };
                  }[];
                  /** @description Final answer template: {{group}}, {{results}}, {{step}}, {{input}} */
                  reply?: string;
                  /** @description Simulated model latency (demos, crash tests) */
                  delayMs?: number;
                }[];
                /** @description Stream replies word by word, this long apart (demos, tests); absent = one piece */
                tokenDelayMs?: number;
              }
            | {
                /** @enum {string} */
                provider: 'openai';
                name: string;
                /** Format: uri */
                baseUrl?: string;
                /**
                 * @description Name of the variable (a secret) holding the key
                 * @default OPENAI_API_KEY
                 */
                apiKeyEnv: string;
                /** @default {} */
                parameters: {
                  [key: string]: components['schemas']['JsonValue'];
                };
                /**
                 * @description Ask the server to stream (tokens reach clients as they are written); false for servers that cannot
                 * @default true
                 */
                stream: boolean;
              };
          /** @default [] */
          tools: {
            name: string;
            /**
             * @default {
             *       "when": "never",
             *       "role": "approver",
             *       "expiresInSeconds": 259200,
             *       "fourEyes": false
             *     }
             */
            approval: {
              /**
               * @description "if": only calls whose arguments meet `condition` wait for a human
               * @default never
               * @enum {string}
               */
              when: 'never' | 'always' | 'if';
              /** @description With when: if, the test(s) on the arguments */
              condition?:
                | {
                    arg: string;
                    /** @enum {string} */
                    op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'exists';
                    /** @description Compared value; a number for gt/gte/lt/lte, a list for in, absent for exists */
                    value?: components['schemas']['JsonValue'];
                  }
                | {
                    arg: string;
                    /** @enum {string} */
                    op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'exists';
                    /** @description Compared value; a number for gt/gte/lt/lte, a list for in, absent for exists */
                    value?: components['schemas']['JsonValue'];
                  }[];
              /**
               * @description The role a principal needs to decide
               * @default approver
               */
              role: string;
              /**
               * @description How long a human has to decide (72 h by default: a wait of days costs the run nothing)
               * @default 259200
               */
              expiresInSeconds: number;
              /**
               * @description The run's principal may not approve its own call
               * @default false
               */
              fourEyes: boolean;
            };
            /** @description Per-agent settings the tool executor receives with each call */
            config?: {
              /** @description http.request: hosts this agent may reach ("api.example.com", or "*.example.com" for subdomains) */
              allowHosts?: string[];
              /** @description http.request: the allowed hosts deduplicate by the Idempotency-Key header, so a POST/PUT/PATCH/DELETE may be retried (idempotent); otherwise it is at-most-once */
              honoursIdempotencyKey?: boolean;
              /** @description Tools that open waitpoints (wait.external, a remote service described with opensWaitpoint): how the run waits for the outside world to complete the call */
              waitpoint?: {
                /**
                 * @description How long the run waits for the completion (default 24 h, at most 30 days)
                 * @default 86400
                 */
                ttlSeconds: number;
                /**
                 * @description tool_error: the model is told `waitpoint.expired`; fail_run: the run fails
                 * @default tool_error
                 * @enum {string}
                 */
                onExpiry: 'tool_error' | 'fail_run';
                /** @description The JSON Schema a completion result must fit (any JSON without it) */
                result?: {
                  [key: string]: components['schemas']['JsonValue'];
                };
              };
            };
            /** @description The roles that may use the tool: the run's principal must hold one of them when the call starts and again when an approved call runs */
            roles?: string[];
          }[];
          /** @default 10 */
          maxSteps: number;
          /**
           * @description How long one model call may take before it is aborted and retried (and how long a step may show no progress); see docs/models.md
           * @default 300
           */
          stepTimeoutSeconds: number;
          /**
           * @description Attempts per model call of a step (errors, timeouts and lost workers count); past them the run fails
           * @default 3
           */
          modelAttempts: number;
          /**
           * @description The run's working-time budget: time from its start, leaving out its waits for a human (approvals, uncertain effects); past it the run fails with budget.exceeded
           * @default 3600
           */
          runTimeoutSeconds: number;
          /** @description The priority of the agent's runs in the admission queue, in seconds (-600 to 600): a held run is served as if requested this much earlier; a request may lower it, and raise it only with the admin role. Absent: 0 */
          priority?: number;
          /** @description How long a run may wait to start after its request (queued for admission past a bound or a concurrency key, or behind its thread's run); past it the run fails as run.queue_expired (retryable). Absent: runs wait until they start */
          queueTtlSeconds?: number;
          /**
           * @default {
           *       "tokens": 2000000,
           *       "rateLimitWaitSeconds": 1800
           *     }
           */
          budget: {
            /** @description Model calls per run, every attempt counted; default maxSteps × modelAttempts */
            modelCalls?: number;
            /**
             * @description Tokens per run (input + output as the provider reports them)
             * @default 2000000
             */
            tokens: number;
            /**
             * @description How long a run may wait out the provider's 429s (Retry-After) in all; those waits are not attempts. Past it the run fails with model.rate_limited
             * @default 1800
             */
            rateLimitWaitSeconds: number;
          };
          /**
           * @description What of the conversation the model is sent; the log keeps all of it
           * @default {}
           */
          context: {
            /** @description Send the model at most the last N messages of the conversation */
            maxMessages?: number;
            /** @description Send the model at most about this many tokens of the conversation (4 characters a token) */
            maxTokens?: number;
          };
          /**
           * @default {
           *       "recall": false
           *     }
           */
          memory: {
            /** @default false */
            recall: boolean;
          };
          /** @description Concurrency keys: at most `max` runs of the tenant in flight per value of `key` (e.g. per customer); several apply together. Not the thread policy `concurrency`. */
          slots?: {
            name: string;
            key: string;
            /** @description The most runs in flight at once per value of the key */
            max: number;
          }[];
          /** @description Of the tenant's requests for one key that come less than `periodSeconds` apart, only the last runs, `periodSeconds` after it; the others end as superseded */
          debounce?: {
            /** @description How long a request waits for a later one of its key before its run starts, in seconds (1 s to a day) */
            periodSeconds: number;
            /** @description Debounced per value of this expression over the request's metadata; absent: for the agent as a whole */
            key?: string;
          };
          /** @description At most `limit` of the tenant's runs of this agent start in any `periodSeconds` (per value of `key` when given); later requests are held for admission */
          throttle?: {
            /** @description The most runs that start in any period */
            limit: number;
            /** @description The length of the window the starts are counted in, in seconds (1 s to a day) */
            periodSeconds: number;
            /** @description Counted per value of this expression over the request's metadata; absent: for the agent as a whole */
            key?: string;
          };
        };
      }[];
    };
    AgentReply: {
      agent: {
        name: string;
        version: number;
        digest: string;
        /**
         * @description tenant: the caller's tenant owns it; shared: the deployment offers it to every tenant
         * @enum {string}
         */
        scope: 'tenant' | 'shared';
        definition: {
          name: string;
          /** @default  */
          description: string;
          /** @default  */
          instructions: string;
          model:
            | {
                /** @enum {string} */
                provider: 'scripted';
                /** @default scripted */
                name: string;
                script: {
                  /** @default {} */
                  when: {
                    /** @description Regular expression tested against the latest user message (named groups become template variables) */
                    user?: string;
                    /** @description true: only right after tool results; false: only when no tool result is pending */
                    afterTools?: boolean;
                    /** @description Only while the run is at a step lower than this */
                    stepBelow?: number;
                  };
                  /** @description Tool calls to make (in parallel); string values are templates */
                  call?: {
                    tool: string;
                    /** @default {} */
                    args: {
                      [key: string]: components['schemas']['JsonValue'];
                    };
                  }[];
                  /** @description Final answer template: {{group}}, {{results}}, {{step}}, {{input}} */
                  reply?: string;
                  /** @description Simulated model latency (demos, crash tests) */
                  delayMs?: number;
                }[];
                /** @description Stream replies word by word, this long apart (demos, tests); absent = one piece */
                tokenDelayMs?: number;
              }
            | {
                /** @enum {string} */
                provider: 'openai';
                name: string;
                /** Format: uri */
                baseUrl?: string;
                /**
                 * @description Name of the variable (a secret) holding the key
                 * @default OPENAI_API_KEY
                 */
                apiKeyEnv: string;
                /** @default {} */
                parameters: {
                  [key: string]: components['schemas']['JsonValue'];
                };
                /**
                 * @description Ask the server to stream (tokens reach clients as they are written); false for servers that cannot
                 * @default true
                 */
                stream: boolean;
              };
          /** @default [] */
          tools: {
            name: string;
            /**
             * @default {
             *       "when": "never",
             *       "role": "approver",
             *       "expiresInSeconds": 259200,
             *       "fourEyes": false
             *     }
             */
            approval: {
              /**
               * @description "if": only calls whose arguments meet `condition` wait for a human
               * @default never
               * @enum {string}
               */
              when: 'never' | 'always' | 'if';
              /** @description With when: if, the test(s) on the arguments */
              condition?:
                | {
                    arg: string;
                    /** @enum {string} */
                    op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'exists';
                    /** @description Compared value; a number for gt/gte/lt/lte, a list for in, absent for exists */
                    value?: components['schemas']['JsonValue'];
                  }
                | {
                    arg: string;
                    /** @enum {string} */
                    op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'exists';
                    /** @description Compared value; a number for gt/gte/lt/lte, a list for in, absent for exists */
                    value?: components['schemas']['JsonValue'];
                  }[];
              /**
               * @description The role a principal needs to decide
               * @default approver
               */
              role: string;
              /**
               * @description How long a human has to decide (72 h by default: a wait of days costs the run nothing)
               * @default 259200
               */
              expiresInSeconds: number;
              /**
               * @description The run's principal may not approve its own call
               * @default false
               */
              fourEyes: boolean;
            };
            /** @description Per-agent settings the tool executor receives with each call */
            config?: {
              /** @description http.request: hosts this agent may reach ("api.example.com", or "*.example.com" for subdomains) */
              allowHosts?: string[];
              /** @description http.request: the allowed hosts deduplicate by the Idempotency-Key header, so a POST/PUT/PATCH/DELETE may be retried (idempotent); otherwise it is at-most-once */
              honoursIdempotencyKey?: boolean;
              /** @description Tools that open waitpoints (wait.external, a remote service described with opensWaitpoint): how the run waits for the outside world to complete the call */
              waitpoint?: {
                /**
                 * @description How long the run waits for the completion (default 24 h, at most 30 days)
                 * @default 86400
                 */
                ttlSeconds: number;
                /**
                 * @description tool_error: the model is told `waitpoint.expired`; fail_run: the run fails
                 * @default tool_error
                 * @enum {string}
                 */
                onExpiry: 'tool_error' | 'fail_run';
                /** @description The JSON Schema a completion result must fit (any JSON without it) */
                result?: {
                  [key: string]: components['schemas']['JsonValue'];
                };
              };
            };
            /** @description The roles that may use the tool: the run's principal must hold one of them when the call starts and again when an approved call runs */
            roles?: string[];
          }[];
          /** @default 10 */
          maxSteps: number;
          /**
           * @description How long one model call may take before it is aborted and retried (and how long a step may show no progress); see docs/models.md
           * @default 300
           */
          stepTimeoutSeconds: number;
          /**
           * @description Attempts per model call of a step (errors, timeouts and lost workers count); past them the run fails
           * @default 3
           */
          modelAttempts: number;
          /**
           * @description The run's working-time budget: time from its start, leaving out its waits for a human (approvals, uncertain effects); past it the run fails with budget.exceeded
           * @default 3600
           */
          runTimeoutSeconds: number;
          /** @description The priority of the agent's runs in the admission queue, in seconds (-600 to 600): a held run is served as if requested this much earlier; a request may lower it, and raise it only with the admin role. Absent: 0 */
          priority?: number;
          /** @description How long a run may wait to start after its request (queued for admission past a bound or a concurrency key, or behind its thread's run); past it the run fails as run.queue_expired (retryable). Absent: runs wait until they start */
          queueTtlSeconds?: number;
          /**
           * @default {
           *       "tokens": 2000000,
           *       "rateLimitWaitSeconds": 1800
           *     }
           */
          budget: {
            /** @description Model calls per run, every attempt counted; default maxSteps × modelAttempts */
            modelCalls?: number;
            /**
             * @description Tokens per run (input + output as the provider reports them)
             * @default 2000000
             */
            tokens: number;
            /**
             * @description How long a run may wait out the provider's 429s (Retry-After) in all; those waits are not attempts. Past it the run fails with model.rate_limited
             * @default 1800
             */
            rateLimitWaitSeconds: number;
          };
          /**
           * @description What of the conversation the model is sent; the log keeps all of it
           * @default {}
           */
          context: {
            /** @description Send the model at most the last N messages of the conversation */
            maxMessages?: number;
            /** @description Send the model at most about this many tokens of the conversation (4 characters a token) */
            maxTokens?: number;
          };
          /**
           * @default {
           *       "recall": false
           *     }
           */
          memory: {
            /** @default false */
            recall: boolean;
          };
          /** @description Concurrency keys: at most `max` runs of the tenant in flight per value of `key` (e.g. per customer); several apply together. Not the thread policy `concurrency`. */
          slots?: {
            name: string;
            key: string;
            /** @description The most runs in flight at once per value of the key */
            max: number;
          }[];
          /** @description Of the tenant's requests for one key that come less than `periodSeconds` apart, only the last runs, `periodSeconds` after it; the others end as superseded */
          debounce?: {
            /** @description How long a request waits for a later one of its key before its run starts, in seconds (1 s to a day) */
            periodSeconds: number;
            /** @description Debounced per value of this expression over the request's metadata; absent: for the agent as a whole */
            key?: string;
          };
          /** @description At most `limit` of the tenant's runs of this agent start in any `periodSeconds` (per value of `key` when given); later requests are held for admission */
          throttle?: {
            /** @description The most runs that start in any period */
            limit: number;
            /** @description The length of the window the starts are counted in, in seconds (1 s to a day) */
            periodSeconds: number;
            /** @description Counted per value of this expression over the request's metadata; absent: for the agent as a whole */
            key?: string;
          };
        };
      };
      created?: boolean;
    };
    ToolList: {
      tools: {
        name: string;
        description: string;
        /** @enum {string} */
        kind: 'pure' | 'idempotent' | 'at-most-once';
        /** @description builtin, module:<spec>, remote:<subject>, mcp:<server> */
        source: string;
        /**
         * @description tenant: bound to the caller's tenant; shared: offered to every tenant
         * @enum {string}
         */
        scope: 'tenant' | 'shared';
        /** @description Runs inside the orchestrator (a local tool) */
        local: boolean;
        /** @description The JSON Schema the model receives */
        parameters: {
          [key: string]: components['schemas']['JsonValue'];
        };
      }[];
      problems: {
        source: string;
        tool?: string;
        code: string;
        message: string;
      }[];
    };
    /** @description ScheduleList */
    ScheduleList: {
      schedules: {
        id: string;
        agent: string;
        input: string;
        cron?: string;
        timezone?: string;
        everySeconds?: number;
        /** @enum {string} */
        thread: 'new' | 'shared';
        /** @description The shared thread (thread: shared) */
        threadId?: string;
        /** @enum {string} */
        overlap: 'skip' | 'enqueue' | 'cancel-previous';
        /** @enum {string} */
        catchUp: 'skip' | 'once' | 'all';
        catchUpMax?: number;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        endAt?: string;
        webhookUrl?: string;
        paused: boolean;
        /** @description Why it was paused when no one asked it: `principal.revoked: …` (its creator was revoked) */
        pausedReason?: string;
        createdBy: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        createdAt: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        updatedAt: string;
        /**
         * Format: date-time
         * @description null: paused or past its end
         */
        nextDueAt: string | null;
        lastRunId: string | null;
        /** @description The latest ticks, newest first (get only) */
        recentTicks?: {
          /**
           * Format: date-time
           * @description RFC 3339 timestamp
           */
          tickAt: string;
          /** @enum {string} */
          action: 'start' | 'skip';
          /** @description Why a tick was skipped (overlap) */
          reason: string | null;
          /** @description The run request it made (the run's id derives from it) */
          requestId: string | null;
          runId: string | null;
          /**
           * Format: date-time
           * @description RFC 3339 timestamp
           */
          decidedAt: string;
          /** @description The orchestrator that decided it */
          decidedBy: string;
        }[];
      }[];
    };
    /** @description ScheduleReply */
    ScheduleReply: {
      /** @description ScheduleView */
      schedule: {
        id: string;
        agent: string;
        input: string;
        cron?: string;
        timezone?: string;
        everySeconds?: number;
        /** @enum {string} */
        thread: 'new' | 'shared';
        /** @description The shared thread (thread: shared) */
        threadId?: string;
        /** @enum {string} */
        overlap: 'skip' | 'enqueue' | 'cancel-previous';
        /** @enum {string} */
        catchUp: 'skip' | 'once' | 'all';
        catchUpMax?: number;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        endAt?: string;
        webhookUrl?: string;
        paused: boolean;
        /** @description Why it was paused when no one asked it: `principal.revoked: …` (its creator was revoked) */
        pausedReason?: string;
        createdBy: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        createdAt: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        updatedAt: string;
        /**
         * Format: date-time
         * @description null: paused or past its end
         */
        nextDueAt: string | null;
        lastRunId: string | null;
        /** @description The latest ticks, newest first (get only) */
        recentTicks?: {
          /**
           * Format: date-time
           * @description RFC 3339 timestamp
           */
          tickAt: string;
          /** @enum {string} */
          action: 'start' | 'skip';
          /** @description Why a tick was skipped (overlap) */
          reason: string | null;
          /** @description The run request it made (the run's id derives from it) */
          requestId: string | null;
          runId: string | null;
          /**
           * Format: date-time
           * @description RFC 3339 timestamp
           */
          decidedAt: string;
          /** @description The orchestrator that decided it */
          decidedBy: string;
        }[];
      };
    };
    /** @description ScheduleDeleted */
    ScheduleDeleted: {
      deleted: string;
    };
    /** @description WebhookDeliveryList */
    WebhookDeliveryList: {
      deliveries: {
        /** @description The receiver dedups on it (header Ratchet-Webhook-Id) */
        deliveryId: string;
        url: string;
        /** @enum {string} */
        status: 'pending' | 'delivered' | 'dead';
        attempts: number;
        runId?: string;
        /** @description How the run ended */
        runStatus?: string;
        lastError: string | null;
        /** @description The receiver's last HTTP status */
        lastStatus: number | null;
        /**
         * Format: date-time
         * @description pending only
         */
        nextAttemptAt: string | null;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        createdAt: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        deliveredAt: string | null;
      }[];
    };
    /** @description WebhookSecret */
    WebhookSecret: {
      secret: string;
      /** @description How a receiver verifies a delivery */
      scheme: string;
      /**
       * Format: date-time
       * @description After a rotation: until when the previous secret also signs deliveries (null: it does not)
       */
      previousValidUntil: string | null;
    };
    /** @description UsageReport */
    UsageReport: {
      /**
       * Format: date-time
       * @description RFC 3339 timestamp
       */
      from: string;
      /**
       * Format: date-time
       * @description RFC 3339 timestamp
       */
      to?: string;
      by: ('day' | 'month' | 'agent' | 'model' | 'run')[];
      /** @description One per combination of the `by` values that has calls, in their order */
      groups: {
        /** @description UTC day, YYYY-MM-DD (grouped by day) */
        day?: string;
        /** @description UTC month, YYYY-MM (grouped by month) */
        month?: string;
        agent?: string;
        model?: string;
        runId?: string;
        /** @description Model calls answered (one `model.responded` each) */
        calls: number;
        inputTokens: number;
        outputTokens: number;
        totalTokens: number;
        /** @description What the answered calls cost by the price table (MODEL_PRICES), in its currency (to the millionth) */
        cost: number;
        /** @description Answered calls of models the price table has no price for: their cost is not in `cost` */
        unpricedCalls: number;
        /** @description Calls the log shows made whose answer the run did not use: the worker making one stopped mid-call (a redelivery), or its answer came after the run moved on (`result.ignored`). They may have been billed; their tokens are unknown and not in the token figures */
        abortedCalls: number;
      }[];
      /** @description More groups than `limit`: the figures of the rest are in `total` only */
      truncated: boolean;
      /** @description Every call of the window and filters */
      total: {
        /** @description Model calls answered (one `model.responded` each) */
        calls: number;
        inputTokens: number;
        outputTokens: number;
        totalTokens: number;
        /** @description What the answered calls cost by the price table (MODEL_PRICES), in its currency (to the millionth) */
        cost: number;
        /** @description Answered calls of models the price table has no price for: their cost is not in `cost` */
        unpricedCalls: number;
        /** @description Calls the log shows made whose answer the run did not use: the worker making one stopped mid-call (a redelivery), or its answer came after the run moved on (`result.ignored`). They may have been billed; their tokens are unknown and not in the token figures */
        abortedCalls: number;
      };
    };
    ApprovalList: {
      approvals: components['schemas']['ApprovalView'][];
    };
    ApprovalView: {
      id: string;
      /** @enum {string} */
      kind: 'tool' | 'escalation' | 'waitpoint';
      /** @enum {string} */
      status: 'pending' | 'granted' | 'rejected' | 'expired' | 'resolved' | 'cancelled' | 'completed' | 'failed';
      /** @description Thread id */
      threadId: string;
      /** @description Run id */
      runId: string;
      step: number;
      /** @description Tool-call id chosen by the model */
      callId: string;
      agent: string;
      tool: string;
      args: {
        [key: string]: components['schemas']['JsonValue'];
      };
      argsDigest: string;
      role: string;
      fourEyes: boolean;
      requestedBy: string;
      requestedAt: string;
      expiresAt: string | null;
      choices: ('approve' | 'reject' | 'happened' | 'retry' | 'fail')[];
      idempotencyKey: string | null;
      reason: string | null;
      decision: {
        decision: string;
        by: string;
        reason: string;
        at: string;
      } | null;
      waitpoint?: {
        /** @enum {string} */
        onExpiry: 'tool_error' | 'fail_run';
        resultSchema: {
          [key: string]: components['schemas']['JsonValue'];
        } | null;
      } | null;
    };
    WaitpointList: {
      waitpoints: components['schemas']['ApprovalView'][];
    };
    WaitpointView: {
      id: string;
      /** @enum {string} */
      kind: 'tool' | 'escalation' | 'waitpoint';
      /** @enum {string} */
      status: 'pending' | 'granted' | 'rejected' | 'expired' | 'resolved' | 'cancelled' | 'completed' | 'failed';
      /** @description Thread id */
      threadId: string;
      /** @description Run id */
      runId: string;
      step: number;
      /** @description Tool-call id chosen by the model */
      callId: string;
      agent: string;
      tool: string;
      args: {
        [key: string]: components['schemas']['JsonValue'];
      };
      argsDigest: string;
      role: string;
      fourEyes: boolean;
      requestedBy: string;
      requestedAt: string;
      expiresAt: string | null;
      choices: ('approve' | 'reject' | 'happened' | 'retry' | 'fail')[];
      idempotencyKey: string | null;
      reason: string | null;
      decision: {
        decision: string;
        by: string;
        reason: string;
        at: string;
      } | null;
      waitpoint?: {
        /** @enum {string} */
        onExpiry: 'tool_error' | 'fail_run';
        resultSchema: {
          [key: string]: components['schemas']['JsonValue'];
        } | null;
      } | null;
      /** @description POST here (on this gateway) to complete it without a credential; keep it as secret as a key */
      callbackPath: string | null;
    };
    MemoryItemReply: {
      /** @description MemoryItem */
      item: {
        /** @description Path such as users/alice/preferences */
        namespace: string;
        /** @description Key within the namespace */
        key: string;
        value: components['schemas']['JsonValue'];
        /** @description Searchable text; a flattening of the value unless the writer gave one */
        text: string;
        /** @description The principal that created the item; only it (or an admin) may change it */
        owner: string;
        /** @description The principal the item is about (forget-subject erases it) */
        subject?: string;
        /** @description Where the item came from; never used for authorisation */
        provenance: {
          /** @description Thread id */
          threadId?: string;
          /** @description Run id */
          runId?: string;
          eventId?: string;
        };
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        createdAt: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        updatedAt: string;
        /** @description 1 on create, +1 on every put */
        version: number;
        /**
         * Format: date-time
         * @description Absent = kept until deleted (unless a retention rule applies)
         */
        expiresAt?: string;
        refreshOnRead: boolean;
        ttlSeconds?: number;
      };
    };
    MemoryDeleteReply: {
      /** @enum {boolean} */
      deleted: true;
      version: number;
    };
    MemoryListReply: {
      items: {
        /** @description Path such as users/alice/preferences */
        namespace: string;
        /** @description Key within the namespace */
        key: string;
        value: components['schemas']['JsonValue'];
        /** @description Searchable text; a flattening of the value unless the writer gave one */
        text: string;
        /** @description The principal that created the item; only it (or an admin) may change it */
        owner: string;
        /** @description The principal the item is about (forget-subject erases it) */
        subject?: string;
        /** @description Where the item came from; never used for authorisation */
        provenance: {
          /** @description Thread id */
          threadId?: string;
          /** @description Run id */
          runId?: string;
          eventId?: string;
        };
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        createdAt: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        updatedAt: string;
        /** @description 1 on create, +1 on every put */
        version: number;
        /**
         * Format: date-time
         * @description Absent = kept until deleted (unless a retention rule applies)
         */
        expiresAt?: string;
        refreshOnRead: boolean;
        ttlSeconds?: number;
      }[];
      nextCursor?: string;
    };
    MemorySearchReply: {
      hits: {
        /** @description MemoryItem */
        item: {
          /** @description Path such as users/alice/preferences */
          namespace: string;
          /** @description Key within the namespace */
          key: string;
          value: components['schemas']['JsonValue'];
          /** @description Searchable text; a flattening of the value unless the writer gave one */
          text: string;
          /** @description The principal that created the item; only it (or an admin) may change it */
          owner: string;
          /** @description The principal the item is about (forget-subject erases it) */
          subject?: string;
          /** @description Where the item came from; never used for authorisation */
          provenance: {
            /** @description Thread id */
            threadId?: string;
            /** @description Run id */
            runId?: string;
            eventId?: string;
          };
          /**
           * Format: date-time
           * @description RFC 3339 timestamp
           */
          createdAt: string;
          /**
           * Format: date-time
           * @description RFC 3339 timestamp
           */
          updatedAt: string;
          /** @description 1 on create, +1 on every put */
          version: number;
          /**
           * Format: date-time
           * @description Absent = kept until deleted (unless a retention rule applies)
           */
          expiresAt?: string;
          refreshOnRead: boolean;
          ttlSeconds?: number;
        };
        score: number;
      }[];
    };
    /** @description RevocationList */
    RevocationList: {
      revocations: components['schemas']['RevocationView'][];
    };
    /** @description RevocationView */
    RevocationView: {
      id: string;
      subject: string;
      jti: string | null;
      /** @description RFC 3339, or null: whenever issued */
      issuedBefore: string | null;
      reason: string;
      /** @description The principal that added the entry */
      createdBy: string;
      createdAt: string;
    };
    /** @description RevocationDeleted */
    RevocationDeleted: {
      deleted: string;
    };
    /** @description RunAccepted */
    RunAccepted: {
      runId: string;
      threadId: string;
      /** @description The Idempotency-Key, or a generated id when none was sent */
      requestId: string;
      /** @enum {string} */
      status: 'accepted';
      links: {
        events: string;
        run: string;
        thread: string;
      };
    };
    /** @description RunList */
    RunList: {
      runs: {
        /** @description Run id */
        runId: string;
        /** @description Thread id */
        threadId: string;
        requestId: string;
        agent: string;
        agentVersion: number;
        principalId: string;
        /** @enum {string} */
        status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
        steps: number;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        startedAt: string | null;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        endedAt: string | null;
        /** @description RunWaiting */
        waiting?: {
          /**
           * @description approval: a human decides a call; waitpoint: the outside world completes a job a call started; operator: an uncertain effect; admission (a queued run): the tenant had as many runs in flight as its bound, it starts when one ends
           * @enum {string}
           */
          on: 'approval' | 'waitpoint' | 'operator' | 'admission';
          /**
           * Format: date-time
           * @description When the wait began (its time does not count against the run's working time)
           */
          since: string;
          /**
           * Format: date-time
           * @description When the wait expires (an approval's or a waitpoint's expiry); absent: no expiry of its own
           */
          until?: string;
          /** @description For admission: the bound it waits for, e.g. "concurrency key customer=42 at its max of 5 runs in flight" */
          for?: string;
        };
        /**
         * Format: date-time
         * @description While queued: past this time it does not start and fails as run.queue_expired (its queued TTL)
         */
        queuedUntil?: string;
        /** @description While queued: its priority in the admission queue, in seconds (absent: 0) */
        priority?: number;
      }[];
      /** @description Pass as `cursor` for the next page; absent on the last page */
      nextCursor?: string;
    };
    /** @description RunView */
    RunView: {
      /** @description Run id */
      runId: string;
      /** @description Thread id */
      threadId: string;
      requestId: string;
      agent: string;
      agentVersion: number;
      principalId: string;
      /** @enum {string} */
      status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
      steps: number;
      /**
       * Format: date-time
       * @description RFC 3339 timestamp
       */
      startedAt: string | null;
      /**
       * Format: date-time
       * @description RFC 3339 timestamp
       */
      endedAt: string | null;
      /** @description RunWaiting */
      waiting?: {
        /**
         * @description approval: a human decides a call; waitpoint: the outside world completes a job a call started; operator: an uncertain effect; admission (a queued run): the tenant had as many runs in flight as its bound, it starts when one ends
         * @enum {string}
         */
        on: 'approval' | 'waitpoint' | 'operator' | 'admission';
        /**
         * Format: date-time
         * @description When the wait began (its time does not count against the run's working time)
         */
        since: string;
        /**
         * Format: date-time
         * @description When the wait expires (an approval's or a waitpoint's expiry); absent: no expiry of its own
         */
        until?: string;
        /** @description For admission: the bound it waits for, e.g. "concurrency key customer=42 at its max of 5 runs in flight" */
        for?: string;
      };
      /**
       * Format: date-time
       * @description While queued: past this time it does not start and fails as run.queue_expired (its queued TTL)
       */
      queuedUntil?: string;
      /** @description While queued: its priority in the admission queue, in seconds (absent: 0) */
      priority?: number;
      outcome?: {
        /** @enum {string} */
        status: 'completed' | 'failed' | 'cancelled';
        output?: string;
        error?: {
          code: string;
          message: string;
          /** @default false */
          retryable: boolean;
          /** @description How long the provider asked to wait before a new attempt (Retry-After), when it said */
          retryAfterMs?: number;
        };
        /** @description Version of the terminal event in the thread log */
        version: number;
      };
    };
    CancelAccepted: {
      runId: string;
      threadId: string;
      /** @enum {string} */
      status: 'cancelling';
    };
    /** @description RunOutcomeView */
    RunOutcomeView: {
      /** @description false: the wait ended before the run did; ask again */
      done: boolean;
      run: components['schemas']['RunView'];
    };
    ThreadList: {
      threads: {
        /** @description Thread id */
        threadId: string;
        /**
         * @description Whether the thread has an active run
         * @enum {string}
         */
        status: 'idle' | 'running' | 'queued';
        /** @description Agent of the active run */
        agent: string | null;
        /** @description Run id */
        activeRunId: string | null;
        /** @description Version of the last event the projection reflects */
        version: number;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        createdAt: string;
        /**
         * Format: date-time
         * @description RFC 3339 timestamp
         */
        updatedAt: string;
        runCount: number;
      }[];
      nextCursor?: string;
    };
    /** @description ThreadView */
    ThreadView: {
      /** @description Thread id */
      threadId: string;
      /**
       * @description Whether the thread has an active run
       * @enum {string}
       */
      status: 'idle' | 'running' | 'queued';
      /** @description Agent of the active run */
      agent: string | null;
      /** @description Run id */
      activeRunId: string | null;
      /** @description Version of the last event the projection reflects */
      version: number;
      /**
       * Format: date-time
       * @description RFC 3339 timestamp
       */
      createdAt: string;
      /**
       * Format: date-time
       * @description RFC 3339 timestamp
       */
      updatedAt: string;
      /** @description Oldest request first (at most the last 100) */
      runs: components['schemas']['RunView'][];
    };
    ThreadErased: {
      threadId: string;
      /** @description false: it was erased before; nothing more was removed but what the stream held */
      erased: boolean;
      /** @description Rows and stream messages removed, per store */
      removed: {
        [key: string]: number;
      };
    };
    EventPage: {
      events: (
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'thread.created';
            data: {
              createdBy: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.requested';
            data: {
              requestId: string;
              agent: string;
              agentVersion: number;
              maxSteps: number;
              input: (
                | {
                    /** @enum {string} */
                    role: 'system';
                    content: string;
                  }
                | {
                    /** @enum {string} */
                    role: 'user';
                    content: string;
                  }
                | {
                    /** @enum {string} */
                    role: 'assistant';
                    content: string | null;
                    /** @default [] */
                    toolCalls: {
                      /** @description Tool-call id chosen by the model */
                      id: string;
                      name: string;
                      args: {
                        [key: string]: components['schemas']['JsonValue'];
                      };
                    }[];
                  }
                | {
                    /** @enum {string} */
                    role: 'tool';
                    /** @description Tool-call id chosen by the model */
                    toolCallId: string;
                    name: string;
                    content: string;
                    isError: boolean;
                  }
              )[];
              /** @description Who asked: the verified principal on whose behalf the run acts */
              principal: {
                id: string;
                /** @default [] */
                roles: string[];
              };
              /** @enum {string} */
              concurrency: 'reject' | 'enqueue' | 'interrupt';
              replyTo?: string;
              /** @description Where the run's outcome is POSTed when it ends (docs/webhooks.md) */
              webhookUrl?: string;
              /** @default {} */
              metadata: {
                [key: string]: string;
              };
              /** @description Digest of what the request asked (thread, agent, input, metadata): a resend must match it */
              requestDigest?: string;
              /** @description RunLimits */
              limits?: {
                /** @description Attempts per model call of a step (first call and retries after errors, timeouts or a lost worker) */
                modelAttempts?: number;
                /** @description Budget: model calls of the whole run, attempts included */
                modelCalls?: number;
                /** @description Budget: tokens of the whole run (input + output, as the provider reports) */
                tokens?: number;
                /** @description Budget: wall time from the run's start (runs requested before working time was counted) */
                wallTimeSeconds?: number;
                /** @description Budget: working time from the run's start, leaving out every named wait (an approval, an uncertain effect waiting for an operator) */
                workingTimeSeconds?: number;
                /** @description Budget: time the run may wait out the provider's 429s in all (not attempts); absent: runs requested before, whose 429s are attempts */
                rateLimitWaitSeconds?: number;
                /** @description How long after its request the run may wait to start (held for admission, or behind its thread's run); past it, it fails as run.queue_expired. Absent: no limit */
                queueTtlSeconds?: number;
              };
              /** @description The concurrency keys the run holds while in flight (its agent's `slots` over the request's metadata) */
              slots?: {
                /** @description `<slot name>=<value of its expression>`, e.g. `customer=42` */
                key: string;
                /** @description The most runs of the tenant in flight with this key */
                max: number;
              }[];
              /** @description The debounce the run was requested under: it starts `periodSeconds` after its request unless a later request of its key supersedes it */
              debounce?: {
                /** @description `<agent>`, or `<agent>:<field>=<value>` with a key, e.g. `indexer:documentId=42` */
                key: string;
                /** @description The period, in seconds */
                periodSeconds: number;
              };
              /** @description The throttle the run starts under (its agent's `throttle` over the request's metadata): it starts only when fewer than `limit` runs with its key started in the last `periodSeconds` */
              throttle?: {
                /** @description `<agent>`, or `<agent>:<field>=<value>` with a key, e.g. `support:userId=42` */
                key: string;
                /** @description The most starts with this key in any period */
                limit: number;
                /** @description The period, in seconds */
                periodSeconds: number;
              };
              /** @description Seconds: held for admission, the run is served as if it had waited this much longer (negative: shorter); absent: 0 */
              priority?: number;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.queued';
            data: {
              requestId: string;
              /** @description The thread's run it waits behind (absent: the thread had none) */
              behindRunId?: string;
              /** @description Queued for admission: the tenant had `limit` runs in flight (TENANT_RUNS_OVER_BOUND=queue), a concurrency key of the run had `limit` runs in flight, or its throttle had `limit` starts in the period (or the thread was busy: a throttled run starts only when admitted); it starts when there is room */
              waitingFor?:
                | {
                    /** @enum {string} */
                    bound: 'tenant.runs_limit';
                    limit: number;
                  }
                | {
                    /** @enum {string} */
                    bound: 'slot';
                    /** @description The concurrency key at its max, e.g. `customer=42` */
                    key: string;
                    limit: number;
                  }
                | {
                    /** @enum {string} */
                    bound: 'debounce';
                    /** @description The debounce key, e.g. `indexer:documentId=42` */
                    key: string;
                    periodSeconds: number;
                  }
                | {
                    /** @enum {string} */
                    bound: 'throttle';
                    /** @description The throttle the run starts under, e.g. `support:userId=42` */
                    key: string;
                    limit: number;
                    periodSeconds: number;
                  };
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.rejected';
            data: {
              requestId: string;
              error: {
                code: string;
                message: string;
                /** @default false */
                retryable: boolean;
                /** @description How long the provider asked to wait before a new attempt (Retry-After), when it said */
                retryAfterMs?: number;
              };
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.started';
            data: {
              requestId: string;
              maxSteps: number;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'model.requested';
            data: {
              step: number;
              attempt: number;
              commandId: string;
              retryReason?: string;
              delivery?: number;
              /**
               * Format: date-time
               * @description RFC 3339 timestamp
               */
              notBefore?: string;
              waitFor?: {
                limit: string;
                /** @enum {string} */
                bound: 'requests' | 'tokens' | 'concurrent' | 'share' | 'rate_limited';
              };
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'model.responded';
            data: {
              step: number;
              commandId: string;
              content: string | null;
              toolCalls: {
                /** @description Tool-call id chosen by the model */
                id: string;
                name: string;
                args: {
                  [key: string]: components['schemas']['JsonValue'];
                };
              }[];
              usage: {
                inputTokens: number;
                outputTokens: number;
                /** @description What the call cost by the deployment's price table (MODEL_PRICES), in millionths of its currency; absent: the model has no price */
                costMicros?: number;
              };
              model: string;
              /** @description Memory items recalled into the prompt (identity and version only); absent = no recall was made */
              recalled?: {
                namespace: string;
                key: string;
                version: number;
              }[];
              /** @description How many of the conversation's messages the model was sent (the agent bounds its context); absent = all */
              context?: {
                sent: number;
                of: number;
              };
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'tool.requested';
            data: {
              step: number;
              /** @description Tool-call id chosen by the model */
              callId: string;
              tool: string;
              args: {
                [key: string]: components['schemas']['JsonValue'];
              };
              idempotencyKey: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'tool.completed';
            data: {
              step: number;
              /** @description Tool-call id chosen by the model */
              callId: string;
              result: components['schemas']['JsonValue'];
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'tool.failed';
            data: {
              step: number;
              /** @description Tool-call id chosen by the model */
              callId: string;
              error: {
                code: string;
                message: string;
                /** @default false */
                retryable: boolean;
                /** @description How long the provider asked to wait before a new attempt (Retry-After), when it said */
                retryAfterMs?: number;
              };
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'effect.uncertain';
            data: {
              step: number;
              /** @description Tool-call id chosen by the model */
              callId: string;
              idempotencyKey: string;
              reason: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'approval.requested';
            data: {
              step: number;
              /** @description Tool-call id chosen by the model */
              callId: string;
              approvalId: string;
              tool: string;
              argsDigest: string;
              role: string;
              /**
               * Format: date-time
               * @description RFC 3339 timestamp
               */
              expiresAt: string;
              /** @default false */
              fourEyes: boolean;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'approval.granted';
            data: {
              approvalId: string;
              /** @description Tool-call id chosen by the model */
              callId: string;
              by: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'approval.rejected';
            data: {
              approvalId: string;
              /** @description Tool-call id chosen by the model */
              callId: string;
              by: string;
              reason: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'approval.expired';
            data: {
              approvalId: string;
              /** @description Tool-call id chosen by the model */
              callId: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'waitpoint.created';
            /** @description The call started something outside that answers later: the run waits for its completion (docs/waitpoints.md) */
            data: {
              step: number;
              /** @description Tool-call id chosen by the model */
              callId: string;
              waitpointId: string;
              /**
               * Format: date-time
               * @description RFC 3339 timestamp
               */
              expiresAt: string;
              /** @enum {string} */
              onExpiry: 'tool_error' | 'fail_run';
              /** @description The JSON Schema a completion result must match (absent: any JSON) */
              resultSchema?: {
                [key: string]: components['schemas']['JsonValue'];
              };
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'waitpoint.completed';
            data: {
              waitpointId: string;
              /** @description Tool-call id chosen by the model */
              callId: string;
              by: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'waitpoint.failed';
            data: {
              waitpointId: string;
              /** @description Tool-call id chosen by the model */
              callId: string;
              by: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'waitpoint.expired';
            data: {
              waitpointId: string;
              /** @description Tool-call id chosen by the model */
              callId: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.completed';
            data: {
              output: string;
              steps: number;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.failed';
            data: {
              error: {
                code: string;
                message: string;
                /** @default false */
                retryable: boolean;
                /** @description How long the provider asked to wait before a new attempt (Retry-After), when it said */
                retryAfterMs?: number;
              };
              /**
               * @description With `budget.exceeded`: the budget the run ran out of
               * @enum {string}
               */
              budget?: 'modelCalls' | 'tokens' | 'wallTime' | 'workingTime' | 'tenantTokens' | 'tenantCost';
              /** @description Tool calls already sent whose real outcome is still to come; it is recorded after this event */
              pendingCalls?: string[];
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.cancelled';
            data: {
              by: string;
              reason: string;
              /** @description A debounced run ended by a later request of its key (`by: debounce`): the run of that request */
              supersededBy?: string;
              closedCalls: string[];
              /** @description Tool calls already sent whose real outcome is still to come; it is recorded after this event */
              pendingCalls?: string[];
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'tool.cancelled';
            data: {
              step: number;
              /** @description Tool-call id chosen by the model */
              callId: string;
              reason: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'result.ignored';
            data: {
              /** @enum {string} */
              kind:
                | 'model.result'
                | 'tool.result'
                | 'approval.decision'
                | 'model.attempt'
                | 'waitpoint.decision'
                | 'model.wait';
              /** @description The command id (model) or call id (tool, approval) the result answered */
              ref: string;
              reason: string;
              /** @description The outcome it carried (status or error code), never its content */
              outcome?: string;
            };
          }
        | {
            id: string;
            v: number;
            /** @description Tenant id (bound by credential or subject, never by body) */
            tenantId: string;
            /** @description Thread id */
            threadId: string;
            /** @description Run id */
            runId?: string;
            version: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp
             */
            at: string;
            causationId: string;
            correlationId: string;
            /** @description W3C trace context */
            trace?: {
              traceparent: string;
              tracestate?: string;
            };
            /** @enum {string} */
            type: 'run.resumed';
            data: {
              fromVersion: number;
              reason: string;
              worker: string;
            };
          }
      )[];
      lastVersion: number;
      hasMore: boolean;
      /** @description Pass as `after` for the next page */
      nextAfter: number;
    };
    JsonValue: JsonValue;
    /** @description ScheduleBody */
    ScheduleBody: {
      /** @description A name within your tenant; omitted = generated */
      id?: string;
      /** @description The agent each tick runs */
      agent: string;
      /** @description Each tick's user message */
      input: string;
      /** @description A cron expression: 5 fields, or 6 with seconds first (exactly one of cron, everySeconds) */
      cron?: string;
      /** @description IANA time zone the cron is read in; default UTC */
      timezone?: string;
      /** @description An interval, from creation */
      everySeconds?: number;
      /**
       * @description new: a thread per tick; shared: one thread
       * @default new
       * @enum {string}
       */
      thread?: 'new' | 'shared';
      /**
       * @description A tick while the previous tick's run goes on: skip it, enqueue (shared thread), or cancel that run
       * @default skip
       * @enum {string}
       */
      overlap?: 'skip' | 'enqueue' | 'cancel-previous';
      /**
       * @description Ticks missed (more than the grace late): skip them, run once, or run each up to catchUpMax
       * @default skip
       * @enum {string}
       */
      catchUp?: 'skip' | 'once' | 'all';
      /** @default 10 */
      catchUpMax?: number;
      /**
       * Format: date-time
       * @description No tick after this instant
       */
      endAt?: string;
      /**
       * Format: uri
       * @description Each tick's run posts its outcome here
       */
      webhookUrl?: string;
      /** @default false */
      paused?: boolean;
    };
    /** @description SchedulePatch */
    SchedulePatch: {
      /** @description false resumes: ticks missed while paused are not caught up */
      paused?: boolean;
      input?: string;
      /**
       * Format: date-time
       * @description RFC 3339 timestamp
       */
      endAt?: string | null;
      /** Format: uri */
      webhookUrl?: string | null;
    };
    /** @description WebhookSecretRotation */
    WebhookSecretRotation: {
      /**
       * @description How long the previous secret keeps signing deliveries next to the new one (0: stop at once)
       * @default 86400
       */
      overlapSeconds?: number;
    };
    ApprovalDecisionBody: {
      /** @enum {string} */
      decision: 'approve' | 'reject' | 'happened' | 'retry' | 'fail';
      /** @default  */
      reason?: string;
      result?: components['schemas']['JsonValue'];
    };
    CompleteWaitpointBody: {
      /** @description The result the run goes on with (must fit the schema the tool declared) */
      result?: components['schemas']['JsonValue'];
      /** @description Instead of a result: the job outside failed */
      error?: {
        /** @description A name for what went wrong, e.g. "ci.failed" */
        code: string;
        /** @description What went wrong, for the model */
        message: string;
      };
    };
    /** @description PutMemoryItemBody */
    PutMemoryItemBody: {
      value: components['schemas']['JsonValue'];
      text?: string;
      /** @description A principal id */
      subject?: string;
      /**
       * @description Where the item came from; never used for authorisation
       * @default {}
       */
      provenance?: {
        /** @description Thread id */
        threadId?: string;
        /** @description Run id */
        runId?: string;
        eventId?: string;
      };
      /** @description 0 = must not exist yet; n = must be at version n; absent = last writer wins */
      expectedVersion?: number;
      ttlSeconds?: number;
      /**
       * @description Each get moves expiresAt to now + ttlSeconds
       * @default false
       */
      refreshOnRead?: boolean;
    };
    /** @description RevocationBody */
    RevocationBody: {
      /** @description The JWT `sub` claim to revoke (the principal is `jwt:<sub>`) */
      subject: string;
      /** @description Only the token with this `jti` claim */
      jti?: string;
      /**
       * Format: date-time
       * @description Only tokens issued (`iat`) before this time
       */
      issuedBefore?: string;
      /**
       * @description Why (kept with the entry)
       * @default
       */
      reason?: string;
    };
    CreateRunBody: {
      /** @description Agent name */
      agent: string;
      /** @description The input: a string (one user message), or the user messages */
      input:
        | string
        | {
            /** @enum {string} */
            role: 'user';
            content: string;
          }[];
      /** @description Existing or new thread; omitted = a new thread */
      threadId?: string;
      /** @default {} */
      metadata?: {
        [key: string]: string;
      };
      /**
       * @default reject
       * @enum {string}
       */
      concurrency?: 'reject' | 'enqueue' | 'interrupt';
      /** @description Seconds, -600 to 600: held for admission, the run is served as if requested this much earlier (negative: later); absent: its agent's `priority`. Above the agent's needs the admin role */
      priority?: number;
      /**
       * Format: uri
       * @description The run's outcome is POSTed here when it ends, signed (docs/webhooks.md)
       */
      webhookUrl?: string;
    };
    /** @description CancelRunBody */
    CancelRunBody: {
      /** @default  */
      reason?: string;
    };
    /** @description CreateThreadBody */
    CreateThreadBody: {
      /** @description Agent name */
      agent: string;
      /** @description The input: a string (one user message), or the user messages */
      input:
        | string
        | {
            /** @enum {string} */
            role: 'user';
            content: string;
          }[];
      /** @default {} */
      metadata?: {
        [key: string]: string;
      };
      /**
       * @default reject
       * @enum {string}
       */
      concurrency?: 'reject' | 'enqueue' | 'interrupt';
      /** @description Seconds, -600 to 600: held for admission, the run is served as if requested this much earlier (negative: later); absent: its agent's `priority`. Above the agent's needs the admin role */
      priority?: number;
      /**
       * Format: uri
       * @description The run's outcome is POSTed here when it ends, signed (docs/webhooks.md)
       */
      webhookUrl?: string;
    };
    /** @description RFC 9457 problem details */
    ProblemDetails: {
      /** @description urn:ratchet:problem:<slug>; branch on this */
      type: string;
      title: string;
      status: number;
      detail?: string;
      /** @description The request path */
      instance: string;
      errors?: {
        detail?: string;
        /** @description JSON Pointer into the body, as a URI fragment */
        pointer?: string;
        header?: string;
        parameter?: string;
        /** @description zod's issue code */
        code?: string;
      }[];
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  Health_live: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The Health Check is successful */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @example ok */
            status?: string;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       }
             *     }
             */
            info?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /** @example {} */
            error?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       }
             *     }
             */
            details?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            };
          };
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The Health Check is not successful */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @example error */
            status?: string;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       }
             *     }
             */
            info?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /**
             * @example {
             *       "redis": {
             *         "status": "down",
             *         "message": "Could not connect"
             *       }
             *     }
             */
            error?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       },
             *       "redis": {
             *         "status": "down",
             *         "message": "Could not connect"
             *       }
             *     }
             */
            details?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            };
          };
        };
      };
    };
  };
  Health_ready: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The Health Check is successful */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @example ok */
            status?: string;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       }
             *     }
             */
            info?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /** @example {} */
            error?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       }
             *     }
             */
            details?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            };
          };
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The Health Check is not successful */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @example error */
            status?: string;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       }
             *     }
             */
            info?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /**
             * @example {
             *       "redis": {
             *         "status": "down",
             *         "message": "Could not connect"
             *       }
             *     }
             */
            error?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            } | null;
            /**
             * @example {
             *       "database": {
             *         "status": "up"
             *       },
             *       "redis": {
             *         "status": "down",
             *         "message": "Could not connect"
             *       }
             *     }
             */
            details?: {
              [key: string]: {
                status: string;
              } & {
                [key: string]: unknown;
              };
            };
          };
        };
      };
    };
  };
  Metrics_scrape: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Prometheus text exposition format 0.0.4 */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/plain': string;
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Agents_list: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The definitions */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Agents_register: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description An agent definition (agents/*.yaml as JSON) */
    requestBody: {
      content: {
        'application/json': Record<string, never>;
      };
    };
    responses: {
      /** @description Unchanged: the latest version */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentReply'];
        };
      };
      /** @description A new version */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentReply'];
        };
      };
      /** @description Invalid definition (every problem listed) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The name is a shared agent; or the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Agents_get: {
    parameters: {
      query?: {
        /** @description A version; omitted: the latest */
        version?: number;
      };
      header?: never;
      path: {
        name: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The definition */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentReply'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such agent (version) for this tenant (another tenant's agents are not found) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Approvals_list: {
    parameters: {
      query?: {
        status?: 'pending' | 'granted' | 'rejected' | 'expired' | 'resolved' | 'cancelled' | 'completed' | 'failed';
        /** @description Only these kinds, comma-separated: tool (approvals), escalation (uncertain effects), waitpoint */
        kind?: string;
        /** @description Only approvals of this thread */
        threadId?: string;
        /** @description Only approvals of runs of this agent */
        agent?: string;
        /** @description Only approvals requested at least this long ago: seconds, or 30s, 5m, 2h, 1d */
        olderThan?: string;
        /** @description At most this many */
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The approvals */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Approvals_get: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The approval id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The approval */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalView'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The approval is hidden from your roles */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such approval in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Approvals_decide: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path: {
        /** @description The approval id */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ApprovalDecisionBody'];
      };
    };
    responses: {
      /** @description The decided approval */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalView'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description You may not decide it (a role it names is missing, or four eyes and you started the run) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such approval in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Already decided, or expired; the body names the decision of record; or the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  DeploymentAgents_list: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The shared definitions */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Not a deployment operator credential (a tenant credential, whatever its roles) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  DeploymentAgents_register: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description An agent definition (agents/*.yaml as JSON) */
    requestBody: {
      content: {
        'application/json': Record<string, never>;
      };
    };
    responses: {
      /** @description Unchanged: the latest version */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentReply'];
        };
      };
      /** @description A new version */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentReply'];
        };
      };
      /** @description Invalid definition (every problem listed) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Not a deployment operator credential (a tenant credential, whatever its roles) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Conflict: the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Memory_list: {
    parameters: {
      query?: {
        /** @description `users/alice` matches `users/alice` and `users/alice/x` */
        prefix?: string;
        limit?: number;
        /** @description nextCursor of the previous page */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of items */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemoryListReply'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Memory_get: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description URL-encoded, e.g. users%2Falice%2Fpreferences */
        namespace: string;
        /** @description Key within the namespace */
        key: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The item */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemoryItemReply'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such item in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Memory_put: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description URL-encoded, e.g. users%2Falice%2Fpreferences */
        namespace: string;
        /** @description Key within the namespace */
        key: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['PutMemoryItemBody'];
      };
    };
    responses: {
      /** @description Replaced */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemoryItemReply'];
        };
      };
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemoryItemReply'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The item belongs to another principal */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description expectedVersion does not match */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Memory_remove: {
    parameters: {
      query?: {
        /** @description Delete only this version (409 otherwise) */
        expectedVersion?: number;
      };
      header?: never;
      path: {
        /** @description URL-encoded, e.g. users%2Falice%2Fpreferences */
        namespace: string;
        /** @description Key within the namespace */
        key: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemoryDeleteReply'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The item belongs to another principal */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such item in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description expectedVersion does not match */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Memory_search: {
    parameters: {
      query: {
        /** @description Web-search syntax: words, "quoted phrases", -excluded, or */
        q: string;
        /** @description `users/alice` matches `users/alice` and `users/alice/x` */
        prefix?: string;
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Best matches first */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MemorySearchReply'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Revocations_list: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The entries */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RevocationList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Revocations_add: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['RevocationBody'];
      };
    };
    responses: {
      /** @description Added */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RevocationView'];
        };
      };
      /** @description Invalid entry (every problem listed) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Conflict: the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Revocations_remove: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Removed */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RevocationDeleted'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such revocation for this tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Runs_search: {
    parameters: {
      query?: {
        status?: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
        /** @description Runs waiting for a human: `approval` (a call to approve), `operator` (an uncertain effect to decide), or `any`; a waiting run has status `running` */
        waiting?: 'approval' | 'waitpoint' | 'operator' | 'any';
        /** @description Runs of this agent */
        agent?: string;
        /** @description Runs of this thread */
        threadId?: string;
        /** @description Started at or after this time (RFC 3339) */
        since?: string;
        /** @description Started before this time (RFC 3339) */
        until?: string;
        /** @description `key=value` the run request’s metadata holds; repeat for several (all must hold) */
        metadata?: string | string[];
        /** @description At most this many */
        limit?: number;
        /** @description nextCursor of the previous page */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of runs */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Runs_create: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one; retries with it are safe */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateRunBody'];
      };
    };
    responses: {
      /** @description Accepted: the run request is durably on the bus */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunAccepted'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Conflict: the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The tenant has as many runs in flight (`code`: `tenant.runs_limit`; runs waiting for a human not counted) or as many runs waiting for a human (`code`: `tenant.waiting_runs_limit`) as the deployment allows one tenant; retry after `Retry-After` */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Runs_get: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Run id */
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The run */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunView'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such run in your tenant (or its request was not processed yet) */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Runs_cancel: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path: {
        /** @description Run id */
        runId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CancelRunBody'];
      };
    };
    responses: {
      /** @description The cancel is on the thread inbox */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CancelAccepted'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such run in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The run already ended; or the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Runs_outcome: {
    parameters: {
      query?: {
        /** @description How long to wait for the run to end */
        waitSeconds?: number;
      };
      header?: never;
      path: {
        /** @description Run id */
        runId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The run ended */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunOutcomeView'];
        };
      };
      /** @description Still running when the wait ended */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunOutcomeView'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such run in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Schedules_list: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The schedules */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Schedules_create: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ScheduleBody'];
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleReply'];
        };
      };
      /** @description Invalid schedule: an invalid cron expression, an unknown time zone, an unknown agent, a forbidden webhook address (every problem listed) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The tenant has a schedule with this id; or the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Schedules_get: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The schedule */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleReply'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such schedule for this tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Schedules_remove: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleDeleted'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such schedule for this tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Schedules_update: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['SchedulePatch'];
      };
    };
    responses: {
      /** @description The schedule as changed */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduleReply'];
        };
      };
      /** @description Invalid change */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such schedule for this tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Conflict: the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Threads_list: {
    parameters: {
      query?: {
        /** @description Whether the thread has an active run */
        status?: 'idle' | 'running' | 'queued';
        /** @description Threads with a run of this agent */
        agent?: string;
        limit?: number;
        /** @description nextCursor of the previous page */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of threads */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ThreadList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Threads_create: {
    parameters: {
      query?: never;
      header?: {
        /** @description Retries with the same key create one thread */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateThreadBody'];
      };
    };
    responses: {
      /** @description Accepted: the run request is durably on the bus */
      202: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RunAccepted'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Conflict: the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description The tenant has as many runs in flight (`code`: `tenant.runs_limit`; runs waiting for a human not counted) or as many runs waiting for a human (`code`: `tenant.waiting_runs_limit`) as the deployment allows one tenant; retry after `Retry-After` */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Threads_get: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Thread id */
        threadId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The thread */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ThreadView'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such thread in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Threads_remove: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Thread id */
        threadId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Erased (or erased before: `erased` false) */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ThreadErased'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such thread in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A run of the thread is going: nothing was removed */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Threads_events: {
    parameters: {
      query?: {
        /** @description Events with a version above this one */
        after?: number;
        limit?: number;
      };
      header?: never;
      path: {
        /** @description Thread id */
        threadId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Events with a version above `after` */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventPage'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such thread in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Threads_stream: {
    parameters: {
      query?: {
        /** @description Events with a version above this one */
        after?: number;
      };
      header?: {
        /** @description The last version received; wins over `after` */
        'Last-Event-ID'?: string;
      };
      path: {
        /** @description Thread id */
        threadId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description An event stream: `id: <version>`, `event: <type>`, `data: <ThreadEvent JSON>`; `: keep-alive` comments every 15 s */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such thread in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Threads_live: {
    parameters: {
      query?: {
        /** @description Events with a version above this one */
        after?: number;
        /** @description Comma-separated: `messages`, `events` or both */
        mode?: string;
      };
      header?: {
        /** @description The last version received; wins over `after` */
        'Last-Event-ID'?: string;
      };
      path: {
        /** @description Thread id */
        threadId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description An event stream of `token`, `reset` and thread-event messages; `: keep-alive` comments every 15 s */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description An unknown mode */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such thread in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Tools_list: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The tools and the withheld ones */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ToolList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Usage_report: {
    parameters: {
      query?: {
        /** @description Calls answered at or after this time (RFC 3339, or a day YYYY-MM-DD meaning its UTC midnight); default: the first of the current UTC month */
        from?: string;
        /** @description Calls answered before this time (RFC 3339, or a day: its UTC midnight, so `to` is exclusive); default: now */
        to?: string;
        /** @description Comma-separated, in this order: `day`, `month`, `agent`, `model`, `run` (none: only the total) */
        by?: string;
        /** @description Only calls of this agent */
        agent?: string;
        /** @description Only calls answered by this model */
        model?: string;
        /** @description Only calls of this run */
        runId?: string;
        /** @description At most this many groups (`truncated` says there were more) */
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The figures */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UsageReport'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Waitpoints_list: {
    parameters: {
      query?: {
        /** @description Only waitpoints in this state */
        status?: 'pending' | 'completed' | 'failed' | 'expired' | 'cancelled';
        /** @description Only waitpoints of this thread */
        threadId?: string;
        /** @description Only waitpoints of runs of this agent */
        agent?: string;
        /** @description At most this many (default 100) */
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The waitpoints */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WaitpointList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Waitpoints_get: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The waitpoint id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The waitpoint */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WaitpointView'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Reading a waitpoint needs the runner role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such waitpoint in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Waitpoints_complete: {
    parameters: {
      query?: never;
      header?: {
        /** @description Send one to retry safely: the same request with it again gets the first answer; another request with it a 409 */
        'Idempotency-Key'?: string;
      };
      path: {
        /** @description The waitpoint id (`waitpoint.created` in the run’s events) */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CompleteWaitpointBody'];
      };
    };
    responses: {
      /** @description The completed waitpoint */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalView'];
        };
      };
      /** @description The body is neither a result nor an error, or the result does not fit the schema (`waitpoint.invalid_result`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Completing a waitpoint needs the runner role */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such waitpoint in your tenant */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Already completed with another body, expired, or closed with its run (`code` names which); or the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Waitpoints_callback: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The tenant (signed into the token) */
        tenant: string;
        /** @description The waitpoint id */
        id: string;
        /** @description The signature (from GET /v1/waitpoints/{id}) */
        token: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CompleteWaitpointBody'];
      };
    };
    responses: {
      /** @description The completed waitpoint */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalView'];
        };
      };
      /** @description The body is neither a result nor an error, or the result does not fit the schema (`waitpoint.invalid_result`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No such waitpoint, or the token is not its */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Already completed with another body, expired, or closed with its run (`code` names which) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Webhooks_deliveries: {
    parameters: {
      query?: {
        limit?: number;
        status?: 'pending' | 'delivered' | 'dead';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The deliveries */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDeliveryList'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Webhooks_secret: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The secret */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookSecret'];
        };
      };
      /** @description Invalid request (every issue listed in `errors`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
  Webhooks_rotate: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['WebhookSecretRotation'];
      };
    };
    responses: {
      /** @description The new secret */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookSecret'];
        };
      };
      /** @description Invalid body: overlapSeconds is not a whole number from 0 to 604800 */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description No credential, or not a valid one */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description An operator credential, which acts for no tenant */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description Rate limit of this credential exceeded (see Retry-After) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
      /** @description A backing service is unavailable (see Retry-After) */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/problem+json': components['schemas']['ProblemDetails'];
        };
      };
    };
  };
}
