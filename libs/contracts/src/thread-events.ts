import { z } from 'zod';
import { CallId, IsoTime, Principal, RunId, TenantId, ThreadId, TraceContext } from './ids';
import { ChatMessage, Failure, Json, JsonObject, ToolCall, Usage } from './messages';

export const ConcurrencyPolicy = z.enum(['reject', 'enqueue', 'interrupt']);
export type ConcurrencyPolicy = z.infer<typeof ConcurrencyPolicy>;

/**
 * A durable-memory item that was put into a model call's prompt (recall), named by its identity and the
 * version that was read. Never its value or text: memory never rides in the event log (architecture §1).
 */
export const RecalledMemoryItem = z.object({
  namespace: z.string(),
  key: z.string(),
  version: z.number().int().positive(),
});
export type RecalledMemoryItem = z.infer<typeof RecalledMemoryItem>;

/**
 * A concurrency key a run holds while it is in flight (ADR 0045): `<slot>=<value>` (e.g. `customer=42`),
 * from its agent's `slots` and the request's metadata, and the most runs of the tenant that may hold it at
 * once, fixed when the run is requested.
 */
export const RunSlot = z
  .object({
    key: z.string().min(3).max(512).describe('`<slot name>=<value of its expression>`, e.g. `customer=42`'),
    max: z.number().int().positive().describe('The most runs of the tenant in flight with this key'),
  })
  .strict();
export type RunSlot = z.infer<typeof RunSlot>;

/**
 * The throttle a run starts under (docs/flow-control.md#throttle): `<agent>` or `<agent>:<field>=<value>`,
 * and at most `limit` starts of the tenant's runs with this key in any `periodSeconds`, fixed when the run is
 * requested.
 */
export const RunThrottle = z
  .object({
    key: z
      .string()
      .min(1)
      .max(512)
      .describe('`<agent>`, or `<agent>:<field>=<value>` with a key, e.g. `support:userId=42`'),
    limit: z.number().int().positive().describe('The most starts with this key in any period'),
    periodSeconds: z.number().int().positive().describe('The period, in seconds'),
  })
  .strict();
export type RunThrottle = z.infer<typeof RunThrottle>;

/**
 * The debounce a run was requested under (docs/flow-control.md#debounce): `<agent>` or
 * `<agent>:<field>=<value>`; it starts `periodSeconds` after its request unless a later request of the key
 * came first, which supersedes it.
 */
export const RunDebounce = z
  .object({
    key: z
      .string()
      .min(1)
      .max(512)
      .describe('`<agent>`, or `<agent>:<field>=<value>` with a key, e.g. `indexer:documentId=42`'),
    periodSeconds: z.number().int().positive().describe('The period, in seconds'),
  })
  .strict();
export type RunDebounce = z.infer<typeof RunDebounce>;

/** Why a run waits for admission: the tenant's bound on runs in flight, or a concurrency key at its max. */
export const AdmissionBound = z.discriminatedUnion('bound', [
  z.object({ bound: z.literal('tenant.runs_limit'), limit: z.number().int().positive() }),
  z.object({
    bound: z.literal('slot'),
    key: z.string().describe('The concurrency key at its max, e.g. `customer=42`'),
    limit: z.number().int().positive(),
  }),
  z.object({
    bound: z.literal('debounce'),
    key: z.string().describe('The debounce key, e.g. `indexer:documentId=42`'),
    periodSeconds: z.number().int().positive(),
  }),
  z.object({
    bound: z.literal('throttle'),
    key: z.string().describe('The throttle the run starts under, e.g. `support:userId=42`'),
    limit: z.number().int().positive(),
    periodSeconds: z.number().int().positive(),
  }),
]);
export type AdmissionBound = z.infer<typeof AdmissionBound>;

/**
 * What a run may spend, fixed when it is requested (from its agent's definition) so that a retry, a
 * resume or a restart decides against the same bounds. Absent fields take the decider's defaults.
 */
/**
 * A run's priority in the admission queue, in seconds (ADR 0045): a run held for admission is served as
 * if it had been requested this much earlier (negative: later). Bounded, so a run is never passed by
 * runs requested more than twice the bound after it: no priority starves.
 */
export const RunPriority = z.number().int().min(-600).max(600);

export const RunLimits = z
  .object({
    modelAttempts: z
      .number()
      .int()
      .min(1)
      .max(20)
      .optional()
      .describe('Attempts per model call of a step (first call and retries after errors, timeouts or a lost worker)'),
    modelCalls: z.number().int().min(1).optional().describe('Budget: model calls of the whole run, attempts included'),
    tokens: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Budget: tokens of the whole run (input + output, as the provider reports)'),
    wallTimeSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Budget: wall time from the run's start (runs requested before working time was counted)"),
    workingTimeSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "Budget: working time from the run's start, leaving out every named wait (an approval, an uncertain effect waiting for an operator)",
      ),
    rateLimitWaitSeconds: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        "Budget: time the run may wait out the provider's 429s in all (not attempts); absent: runs requested before, whose 429s are attempts",
      ),
    queueTtlSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "How long after its request the run may wait to start (held for admission, or behind its thread's run); past it, it fails as run.queue_expired. Absent: no limit",
      ),
  })
  .describe('RunLimits');
export type RunLimits = z.infer<typeof RunLimits>;

/**
 * Which budget a run ran out of (`budget.exceeded`): one of its own, or its tenant's token or cost cap (per
 * UTC day or month, docs/flow-control.md#token-and-cost-caps), which the next model call could have passed.
 */
export const BudgetName = z.enum(['modelCalls', 'tokens', 'wallTime', 'workingTime', 'tenantTokens', 'tenantCost']);
export type BudgetName = z.infer<typeof BudgetName>;

/** What a result that arrived for something the thread no longer waits for was (see `result.ignored`). */
export const IgnoredKind = z.enum([
  'model.result',
  'tool.result',
  'approval.decision',
  'model.attempt',
  'waitpoint.decision',
  'model.wait',
]);

/**
 * What made a model call wait: a provider limit's requests or tokens per window or calls at once, its
 * tenant's share of the limit's queue (`share`: the tenant holds a window's worth of reservations already),
 * or (`rate_limited`) the provider itself, answering 429.
 */
export const LimitBound = z.enum(['requests', 'tokens', 'concurrent', 'share', 'rate_limited']);
export type LimitBound = z.infer<typeof LimitBound>;

/** What a waitpoint's expiry does: the model sees a `waitpoint.expired` tool error, or the run fails. */
export const WaitpointOnExpiry = z.enum(['tool_error', 'fail_run']);
export type WaitpointOnExpiry = z.infer<typeof WaitpointOnExpiry>;

/** Data of every thread event, by type. The envelope (below) carries identity, position and causality. */
export const EventData = {
  'thread.created': z.object({ createdBy: z.string() }),
  'run.requested': z.object({
    requestId: z.string().min(1).max(256),
    agent: z.string(),
    agentVersion: z.number().int().positive(),
    maxSteps: z.number().int().positive(),
    input: z.array(ChatMessage).min(1),
    principal: Principal,
    concurrency: ConcurrencyPolicy,
    replyTo: z.string().optional(),
    webhookUrl: z.string().optional().describe("Where the run's outcome is POSTed when it ends (docs/webhooks.md)"),
    metadata: z.record(z.string(), z.string()).default({}),
    requestDigest: z
      .string()
      .optional()
      .describe('Digest of what the request asked (thread, agent, input, metadata): a resend must match it'),
    limits: RunLimits.optional(),
    slots: z
      .array(RunSlot)
      .optional()
      .describe("The concurrency keys the run holds while in flight (its agent's `slots` over the request's metadata)"),
    debounce: RunDebounce.optional().describe(
      'The debounce the run was requested under: it starts `periodSeconds` after its request unless a later request of its key supersedes it',
    ),
    throttle: RunThrottle.optional().describe(
      "The throttle the run starts under (its agent's `throttle` over the request's metadata): it starts only when fewer than `limit` runs with its key started in the last `periodSeconds`",
    ),
    priority: RunPriority.optional().describe(
      'Seconds: held for admission, the run is served as if it had waited this much longer (negative: shorter); absent: 0',
    ),
  }),
  'run.queued': z.object({
    requestId: z.string(),
    behindRunId: RunId.optional().describe("The thread's run it waits behind (absent: the thread had none)"),
    waitingFor: AdmissionBound.optional().describe(
      'Queued for admission: the tenant had `limit` runs in flight (TENANT_RUNS_OVER_BOUND=queue), a concurrency key of the run had `limit` runs in flight, or its throttle had `limit` starts in the period (or the thread was busy: a throttled run starts only when admitted); it starts when there is room',
    ),
  }),
  'run.rejected': z.object({ requestId: z.string(), error: Failure }),
  'run.started': z.object({ requestId: z.string(), maxSteps: z.number().int().positive() }),
  'model.requested': z.object({
    step: z.number().int().positive(),
    attempt: z.number().int().positive(),
    commandId: z.string(),
    /** Why this attempt exists when it is not the first: a provider error, a redelivery after a worker died, a resume. */
    retryReason: z.string().optional(),
    /** For an attempt that is a redelivery of the same command: which delivery it was. */
    delivery: z.number().int().positive().optional(),
    /** A retry waits until then before it calls the model (backoff with jitter, or the provider's Retry-After). */
    notBefore: IsoTime.optional(),
    /**
     * The same attempt commanded again because a provider limit had no room for it before `notBefore`: a
     * named wait (not an attempt, not a model call of the budget, not working time).
     */
    waitFor: z.object({ limit: z.string(), bound: LimitBound }).optional(),
  }),
  'model.responded': z.object({
    step: z.number().int().positive(),
    commandId: z.string(),
    content: z.string().nullable(),
    toolCalls: z.array(ToolCall),
    usage: Usage,
    model: z.string(),
    recalled: z
      .array(RecalledMemoryItem)
      .optional()
      .describe('Memory items recalled into the prompt (identity and version only); absent = no recall was made'),
    context: z
      .object({ sent: z.number().int().nonnegative(), of: z.number().int().nonnegative() })
      .optional()
      .describe(
        "How many of the conversation's messages the model was sent (the agent bounds its context); absent = all",
      ),
  }),
  'tool.requested': z.object({
    step: z.number().int().positive(),
    callId: CallId,
    tool: z.string(),
    args: JsonObject,
    idempotencyKey: z.string(),
  }),
  'tool.completed': z.object({ step: z.number().int().positive(), callId: CallId, result: Json }),
  'tool.failed': z.object({ step: z.number().int().positive(), callId: CallId, error: Failure }),
  'effect.uncertain': z.object({
    step: z.number().int().positive(),
    callId: CallId,
    idempotencyKey: z.string(),
    reason: z.string(),
  }),
  'approval.requested': z.object({
    step: z.number().int().positive(),
    callId: CallId,
    approvalId: z.string(),
    tool: z.string(),
    argsDigest: z.string(),
    role: z.string(),
    expiresAt: IsoTime,
    fourEyes: z.boolean().default(false),
  }),
  'approval.granted': z.object({ approvalId: z.string(), callId: CallId, by: z.string() }),
  'approval.rejected': z.object({ approvalId: z.string(), callId: CallId, by: z.string(), reason: z.string() }),
  'approval.expired': z.object({ approvalId: z.string(), callId: CallId }),
  'waitpoint.created': z
    .object({
      step: z.number().int().positive(),
      callId: CallId,
      waitpointId: z.string(),
      expiresAt: IsoTime,
      onExpiry: WaitpointOnExpiry,
      resultSchema: JsonObject.optional().describe('The JSON Schema a completion result must match (absent: any JSON)'),
    })
    .describe(
      'The call started something outside that answers later: the run waits for its completion (docs/waitpoints.md)',
    ),
  'waitpoint.completed': z.object({ waitpointId: z.string(), callId: CallId, by: z.string() }),
  'waitpoint.failed': z.object({ waitpointId: z.string(), callId: CallId, by: z.string() }),
  'waitpoint.expired': z.object({ waitpointId: z.string(), callId: CallId }),
  'run.completed': z.object({ output: z.string(), steps: z.number().int().nonnegative() }),
  'run.failed': z.object({
    error: Failure,
    budget: BudgetName.optional().describe('With `budget.exceeded`: the budget the run ran out of'),
    pendingCalls: z
      .array(CallId)
      .optional()
      .describe('Tool calls already sent whose real outcome is still to come; it is recorded after this event'),
  }),
  'run.cancelled': z.object({
    by: z.string(),
    reason: z.string(),
    supersededBy: RunId.optional().describe(
      'A debounced run ended by a later request of its key (`by: debounce`): the run of that request',
    ),
    /** Calls closed for good (they never ran: waiting for an approval). */
    closedCalls: z.array(CallId),
    pendingCalls: z
      .array(CallId)
      .optional()
      .describe('Tool calls already sent whose real outcome is still to come; it is recorded after this event'),
  }),
  'tool.cancelled': z.object({
    step: z.number().int().positive(),
    callId: CallId,
    reason: z.string(),
  }),
  'result.ignored': z.object({
    kind: IgnoredKind,
    ref: z.string().describe('The command id (model) or call id (tool, approval) the result answered'),
    reason: z.string(),
    outcome: z.string().optional().describe('The outcome it carried (status or error code), never its content'),
  }),
  'run.resumed': z.object({
    fromVersion: z.number().int().nonnegative(),
    reason: z.string(),
    worker: z.string(),
  }),
} as const;

export type EventType = keyof typeof EventData;
export const EVENT_TYPES = Object.keys(EventData) as EventType[];
/** The current schema version of each event type; older versions are upcast on read. */
export const CURRENT_EVENT_VERSION: Record<EventType, number> = Object.fromEntries(
  EVENT_TYPES.map((t) => [t, 1]),
) as Record<EventType, number>;

const envelopeFields = {
  id: z.string().min(1).max(128),
  v: z.number().int().positive(),
  tenantId: TenantId,
  threadId: ThreadId,
  runId: RunId.optional(),
  version: z.number().int().positive(),
  at: IsoTime,
  causationId: z.string(),
  correlationId: z.string(),
  trace: TraceContext.optional(),
};

function envelope<T extends EventType>(type: T) {
  return z.object({ ...envelopeFields, type: z.literal(type), data: EventData[type] });
}

export const ThreadEventSchema = z.discriminatedUnion(
  'type',
  EVENT_TYPES.map((t) => envelope(t)) as unknown as [
    ReturnType<typeof envelope<EventType>>,
    ...ReturnType<typeof envelope<EventType>>[],
  ],
);

/** One event of a thread's log, as stored in Postgres and published on the event feed. */
export type ThreadEvent = {
  [T in EventType]: Omit<z.infer<ReturnType<typeof envelope<T>>>, 'type' | 'data'> & {
    type: T;
    data: z.infer<(typeof EventData)[T]>;
  };
}[EventType];
export type EventOf<T extends EventType> = Extract<ThreadEvent, { type: T }>;
export type EventDataOf<T extends EventType> = z.infer<(typeof EventData)[T]>;

/** An event before it has a place in the log: the decider emits these. */
export type NewEvent = { [T in EventType]: { type: T; runId?: string; data: EventDataOf<T> } }[EventType];

export const TERMINAL_RUN_EVENTS = ['run.completed', 'run.failed', 'run.cancelled'] as const;
