import { z } from 'zod';
import { CallId, IsoTime, Principal, RunId, SubjectToken, TenantId, ThreadId } from './ids';
import { ChatMessage, Failure, Json, JsonObject, Usage, ToolCall } from './messages';
import { ConcurrencyPolicy, LimitBound, RecalledMemoryItem, RunPriority, WaitpointOnExpiry } from './thread-events';
import { AgentToolConfig } from './agent';

/** Where a run's outcome is POSTed when it ends. */
export const WebhookTarget = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .describe('http(s) URL'),
  })
  .describe('WebhookTarget');
export type WebhookTarget = z.infer<typeof WebhookTarget>;

/**
 * A run request, published by the gateway or by any service on `<prefix>.requests.<tenant>`.
 * The tenant comes from the subject (bound by NATS permissions), never from this body.
 */
export const RunRequest = z
  .object({
    requestId: z.string().min(1).max(256).describe('Idempotency key: one requestId starts at most one run, ever'),
    threadId: ThreadId.optional().describe('Existing or new thread; omitted = a new thread'),
    agent: z.string().min(1).max(128).describe('Agent name'),
    input: z
      .array(z.object({ role: z.literal('user'), content: z.string().min(1).max(100_000) }))
      .min(1)
      .max(64),
    principal: Principal,
    metadata: z.record(z.string().max(128), z.string().max(1024)).default({}),
    concurrency: ConcurrencyPolicy.default('reject'),
    priority: RunPriority.optional().describe(
      "Seconds, -600 to 600: held for admission, the run is served as if requested this much earlier (negative: later); absent: its agent's `priority`. Above the agent's needs the admin role",
    ),
    replyTo: z.string().max(256).optional().describe('NATS subject that receives the terminal outcome'),
    webhook: WebhookTarget.optional().describe(
      'An HTTP endpoint that receives the outcome when the run ends (signed; see docs/webhooks.md)',
    ),
  })
  .describe('RunRequest');
export type RunRequest = z.infer<typeof RunRequest>;
export type RunRequestInput = z.input<typeof RunRequest>;

export const ToolSpec = z.object({
  name: z.string(),
  description: z.string(),
  parameters: JsonObject.describe('JSON Schema of the arguments'),
});
export type ToolSpec = z.infer<typeof ToolSpec>;

/** Where a run-scoped message belongs: its tenant, thread and run (each such message starts with these). */
export const RunAddress = { tenantId: TenantId, threadId: ThreadId, runId: RunId };
/** A step of a run (one model call and the tool calls it asks for). */
export const StepAddress = { ...RunAddress, step: z.number().int().positive() };
/** One tool call of a step: the address every call command, result and approval carries. */
export const CallAddress = { ...StepAddress, callId: CallId };

/** Orchestrator → model worker: call the model for this step of this run. */
export const ModelCallCommand = z.object({
  kind: z.literal('model.call'),
  commandId: z.string(),
  ...StepAddress,
  attempt: z.number().int().positive(),
  agent: z.string(),
  agentVersion: z.number().int().positive(),
  messages: z
    .array(ChatMessage)
    .optional()
    .describe("The transcript; the model worker adds the pinned agent version's instructions and tools"),
  transcript: z
    .object({ messages: z.number().int().nonnegative() })
    .optional()
    .describe(
      "Instead of `messages` when the transcript is large: the worker reads the first `messages` messages of the thread's conversation",
    ),
  notBefore: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('A retry: the worker waits until then before it calls the model (backoff)'),
});
export type ModelCallCommand = z.infer<typeof ModelCallCommand>;

/** Orchestrator → tool executor: perform this tool call behind the effect ledger. */
export const ToolCallCommand = z.object({
  kind: z.literal('tool.call'),
  commandId: z.string(),
  ...CallAddress,
  tool: z.string(),
  args: JsonObject,
  idempotencyKey: z.string(),
  principal: Principal,
  toolConfig: AgentToolConfig.optional().describe(
    "The agent's per-tool settings (e.g. allowHosts), from the pinned version",
  ),
});
export type ToolCallCommand = z.infer<typeof ToolCallCommand>;

/**
 * A human's answer to an uncertain effect (ledger state `uncertain`), on `<prefix>.cmd.tool.<tenant>`:
 * `happened` (with the result the outside world shows), `retry` (it did not happen: run it again, once)
 * or `fail` (give the model a failure).
 */
export const ToolResolveCommand = z.object({
  kind: z.literal('tool.resolve'),
  commandId: z.string().min(1).max(256),
  tenantId: TenantId,
  idempotencyKey: z.string().min(1),
  resolution: z.discriminatedUnion('decision', [
    z.object({ decision: z.literal('happened'), result: Json }),
    z.object({ decision: z.literal('retry') }),
    z.object({ decision: z.literal('fail'), reason: z.string().max(2000).default('') }),
  ]),
  by: z.string().min(1).max(256).describe('The principal who decided'),
});
export type ToolResolveCommand = z.infer<typeof ToolResolveCommand>;

/** Everything the tool executor consumes on `<prefix>.cmd.tool.<tenant>`. */
export const ToolCommand = z.discriminatedUnion('kind', [ToolCallCommand, ToolResolveCommand]);
export type ToolCommand = z.infer<typeof ToolCommand>;

/**
 * The head of every orchestrator → approvals command: which call waits for a human (its address, tool
 * and arguments with their digest) and the approval that holds it. An approval request and an
 * escalation differ only in what follows.
 */
export const HeldCallHeader = {
  commandId: z.string(),
  ...CallAddress,
  approvalId: z.string(),
  agent: z.string(),
  tool: z.string(),
  args: JsonObject,
  argsDigest: z.string(),
};

/** Orchestrator → approvals: a call waits for a human decision. */
export const ApprovalRequestCommand = z.object({
  kind: z.literal('approval.request'),
  ...HeldCallHeader,
  role: z.string(),
  fourEyes: z.boolean(),
  expiresAt: z.iso.datetime({ offset: true }),
  requestedBy: Principal,
});
export type ApprovalRequestCommand = z.infer<typeof ApprovalRequestCommand>;

/** Messages that arrive in a thread's inbox, `<prefix>.inbox.<tenant>.<thread>`. */
export const ModelResultMessage = z.object({
  kind: z.literal('model.result'),
  messageId: z.string(),
  ...RunAddress,
  commandId: z.string(),
  step: z.number().int().positive(),
  outcome: z.discriminatedUnion('status', [
    z.object({
      status: z.literal('ok'),
      content: z.string().nullable(),
      toolCalls: z.array(ToolCall),
      usage: Usage,
      model: z.string(),
    }),
    z.object({ status: z.literal('error'), error: Failure }),
  ]),
  /** JetStream delivery of the command this answers (> 1: an earlier worker died mid-call). */
  delivery: z.number().int().positive().optional(),
  worker: z.string().optional(),
  /** The provider limit (docs/flow-control.md) the call was made under, if its key has one. */
  limit: z.string().optional(),
  recalled: z
    .array(RecalledMemoryItem)
    .optional()
    .describe(
      'Memory items the worker put into the prompt (identity and version, never content); absent = no recall was made',
    ),
  context: z
    .object({ sent: z.number().int().nonnegative(), of: z.number().int().nonnegative() })
    .optional()
    .describe("How many of the conversation's messages the model was sent (the agent bounds its context)"),
});
/**
 * A wait on the outside world that a tool call opened (docs/waitpoints.md): its id derives from the run, step
 * and call (a call sent again opens no second one), its expiry is fixed when it is opened.
 */
export const Waitpoint = z.object({
  id: z.string().min(1).max(128),
  expiresAt: IsoTime,
  onExpiry: WaitpointOnExpiry,
  resultSchema: JsonObject.optional(),
});
export type Waitpoint = z.infer<typeof Waitpoint>;

export const ToolResultMessage = z.object({
  kind: z.literal('tool.result'),
  messageId: z.string(),
  ...CallAddress,
  outcome: z.discriminatedUnion('status', [
    z.object({ status: z.literal('completed'), result: Json }),
    z.object({ status: z.literal('failed'), error: Failure }),
    z.object({ status: z.literal('uncertain'), idempotencyKey: z.string(), reason: z.string() }),
    z.object({
      status: z.literal('cancelled'),
      reason: z.string().describe('The call never ran: its run was stopped before it started'),
    }),
    z.object({
      status: z.literal('waiting'),
      waitpoint: Waitpoint.describe('The call started something outside that answers later: the run waits for it'),
    }),
  ]),
});
/**
 * A principal's credential was revoked (an API key, a JWT subject or some of its tokens): announced to
 * the orchestrators (`<prefix>.cmd.revocation.<tenant>`, durable on COMMANDS), which stop the principal's
 * runs and, for a whole principal, pause its schedules (docs/security.md#revocation). Written in the
 * revocation's own transaction (an outbox row), so a revocation is never committed unannounced.
 */
export const PrincipalRevokedMessage = z.object({
  kind: z.literal('principal.revoked'),
  /** `revocation:<id of the revocation>`: the same revocation announced twice is one message. */
  messageId: z.string().min(1).max(300),
  tenantId: TenantId,
  /** `key:<api key id>` or `jwt:<sub>`: the principal runs and schedules record. */
  principalId: z.string().min(1).max(300),
  /**
   * `principal`: every credential of it (an API key, a whole JWT subject) — its queued and running runs
   * stop and its schedules pause. `tokens`: only some of its tokens (a `jti`, or tokens issued before a
   * time) — its runs started before `at` stop (one of them may have been started by such a token), its
   * schedules go on.
   */
  scope: z.enum(['principal', 'tokens']),
  /** When the revocation was committed. */
  at: IsoTime,
  /** Who revoked it (a principal, or `cli:<user>`). */
  by: z.string().min(1).max(300),
  reason: z.string().max(2000),
});
export type PrincipalRevokedMessage = z.infer<typeof PrincipalRevokedMessage>;

export const CancelRunMessage = z.object({
  kind: z.literal('run.cancel'),
  messageId: z.string(),
  ...RunAddress,
  by: z.string(),
  reason: z.string().max(1000),
});
/** Model worker → thread: it started a command that an earlier worker received and never answered. */
export const ModelAttemptMessage = z.object({
  kind: z.literal('model.attempt'),
  messageId: z.string(),
  ...RunAddress,
  commandId: z.string(),
  delivery: z.number().int().positive(),
  worker: z.string(),
});
export type ModelAttemptMessage = z.infer<typeof ModelAttemptMessage>;

/**
 * Model worker → thread: the call was not made, because a provider limit (docs/flow-control.md) has no room
 * for it before `until`. The thread commands it again for then: a named wait, not an attempt.
 */
export const ModelWaitMessage = z.object({
  kind: z.literal('model.wait'),
  messageId: z.string(),
  ...RunAddress,
  commandId: z.string(),
  step: z.number().int().positive(),
  limit: z.string(),
  bound: LimitBound,
  until: IsoTime,
  /** JetStream delivery of the command this answers (> 1: an earlier worker died in it). */
  delivery: z.number().int().positive().optional(),
  worker: z.string().optional(),
});
export type ModelWaitMessage = z.infer<typeof ModelWaitMessage>;

export const ApprovalDecisionMessage = z.object({
  kind: z.literal('approval.decision'),
  messageId: z.string(),
  ...RunAddress,
  callId: CallId,
  approvalId: z.string(),
  decision: z.enum(['granted', 'rejected', 'expired']),
  by: z.string(),
  reason: z.string().max(2000).default(''),
});
export type ApprovalDecisionMessage = z.infer<typeof ApprovalDecisionMessage>;

/**
 * Approvals service → thread: a waitpoint was decided, by its completion (`completed` with the result the
 * run goes on with, or `failed`), or by its TTL (`expired`). Message id `waitpoint-decision:<tenant>:<id>`:
 * a waitpoint is decided once.
 */
export const WaitpointDecisionMessage = z.object({
  kind: z.literal('waitpoint.decision'),
  messageId: z.string(),
  ...RunAddress,
  callId: CallId,
  waitpointId: z.string(),
  decision: z.enum(['completed', 'failed', 'expired']),
  /** With `completed`: the result, already checked against the waitpoint's schema. */
  result: Json.optional(),
  /** With `failed`: what went wrong outside. */
  error: Failure.optional(),
  /** Who completed it (a principal, or `callback` for the signed URL); `ttl` for an expiry. */
  by: z.string(),
});
export type WaitpointDecisionMessage = z.infer<typeof WaitpointDecisionMessage>;
export const ThreadInboxMessage = z.discriminatedUnion('kind', [
  ModelResultMessage,
  ToolResultMessage,
  CancelRunMessage,
  ApprovalDecisionMessage,
  ModelAttemptMessage,
  WaitpointDecisionMessage,
  ModelWaitMessage,
]);
export type ThreadInboxMessage = z.infer<typeof ThreadInboxMessage>;
export type ModelResultMessage = z.infer<typeof ModelResultMessage>;
export type ToolResultMessage = z.infer<typeof ToolResultMessage>;
export type CancelRunMessage = z.infer<typeof CancelRunMessage>;

/**
 * A model's answer as it is written, on core NATS `<prefix>.tokens.<tenant>.<thread>` (not durable: a
 * client that misses some has the whole answer in `model.responded`). `reset` starts each attempt: a
 * client drops what it had of the step's earlier attempts (a retry, a worker that died mid-stream). Text
 * and tool-call deltas of one attempt are numbered from 1 (`seq`).
 */
export const TokenChunk = z.object({
  kind: z.enum(['delta', 'reset']),
  ...StepAddress,
  attempt: z.number().int().positive(),
  commandId: z.string(),
  seq: z.number().int().nonnegative(),
  text: z.string().optional().describe('Text the model wrote since the previous chunk'),
  toolCalls: z
    .array(
      z.object({
        index: z.number().int().nonnegative(),
        id: z.string().optional(),
        name: z.string().optional(),
        args: z.string().optional().describe("More of the call's JSON arguments, as text"),
      }),
    )
    .optional(),
});
export type TokenChunk = z.infer<typeof TokenChunk>;

/**
 * The orchestrator → every process that may be working for a run: it stopped (cancelled, interrupted,
 * out of time). Durable on `<prefix>.cmd.control.<tenant>` for the tool executor (a call of the run
 * that has not started is then never executed), and broadcast on core NATS on
 * `<prefix>.stop.<tenant>.<thread>` so model and tool calls in flight are aborted at once.
 */
export const RunStopNotice = z.object({
  kind: z.literal('run.stop'),
  messageId: z.string(),
  ...RunAddress,
  reason: z.string().max(1000),
  at: z.iso.datetime({ offset: true }),
});
export type RunStopNotice = z.infer<typeof RunStopNotice>;

/**
 * The orchestrator → its webhook sender, on `<prefix>.cmd.webhook.<tenant>`, committed with the event that
 * ended the run: deliver this outcome to `url`. `deliveryId` is stable (one per run outcome): the
 * sender records each delivery once, and the receiver can drop repeats by it.
 */
export const WebhookDeliveryCommand = z
  .object({
    kind: z.literal('webhook.deliver'),
    deliveryId: z.string().min(1).max(256),
    tenantId: TenantId,
    url: z.string().max(2048),
    outcome: z.lazy(() => RunOutcome),
    metadata: z.record(z.string(), z.string()).default({}),
  })
  .describe('WebhookDeliveryCommand');
export type WebhookDeliveryCommand = z.infer<typeof WebhookDeliveryCommand>;

/**
 * Sent to a request's `replyTo` when its run ends, or when the request is refused. Core NATS, after
 * the commit that decided it: it may arrive more than once (a process that published it died before
 * recording that it did, a bus restart); `outcomeId` is the same on every copy, so drop repeats by it.
 */
export const RunOutcome = z.object({
  outcomeId: z
    .string()
    .optional()
    .describe('Stable id of this outcome: every repeat of it carries the same one (drop repeats by it)'),
  requestId: z.string(),
  tenantId: TenantId,
  threadId: ThreadId.optional(),
  runId: RunId.optional(),
  status: z.enum(['completed', 'failed', 'cancelled', 'rejected']),
  output: z.string().optional(),
  error: Failure.optional(),
});
export type RunOutcome = z.infer<typeof RunOutcome>;

export { SubjectToken };
