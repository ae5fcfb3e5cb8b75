import { z } from 'zod';
import { Json, JsonObject } from './messages';
import { RunPriority, WaitpointOnExpiry } from './thread-events';

const ToolRef = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z][a-z0-9_.-]*$/, 'lower-case tool name like "demo.weather"');

/** A rule of the scripted model: the first rule whose `when` matches decides the response. */
export const ScriptRule = z
  .object({
    when: z
      .object({
        user: z
          .string()
          .optional()
          .describe(
            'Regular expression tested against the latest user message (named groups become template variables)',
          ),
        afterTools: z
          .boolean()
          .optional()
          .describe('true: only right after tool results; false: only when no tool result is pending'),
        stepBelow: z.number().int().positive().optional().describe('Only while the run is at a step lower than this'),
      })
      .strict()
      .default({}),
    call: z
      .array(z.object({ tool: ToolRef, args: z.record(z.string(), Json).default({}) }).strict())
      .optional()
      .describe('Tool calls to make (in parallel); string values are templates'),
    reply: z.string().optional().describe('Final answer template: {{group}}, {{results}}, {{step}}, {{input}}'),
    delayMs: z
      .number()
      .int()
      .nonnegative()
      .max(600_000)
      .optional()
      .describe('Simulated model latency (demos, crash tests)'),
  })
  .strict()
  .refine((r) => (r.call !== undefined) !== (r.reply !== undefined), 'a rule needs exactly one of "call" or "reply"');
export type ScriptRule = z.infer<typeof ScriptRule>;

export const ModelSpec = z.discriminatedUnion('provider', [
  z
    .object({
      provider: z.literal('scripted'),
      name: z.string().default('scripted'),
      script: z.array(ScriptRule).min(1),
      tokenDelayMs: z
        .number()
        .int()
        .nonnegative()
        .max(10_000)
        .optional()
        .describe('Stream replies word by word, this long apart (demos, tests); absent = one piece'),
    })
    .strict(),
  z
    .object({
      provider: z.literal('openai'),
      name: z.string().min(1),
      baseUrl: z.url().optional(),
      apiKeyEnv: z.string().default('OPENAI_API_KEY').describe('Name of the variable (a secret) holding the key'),
      parameters: z.record(z.string(), Json).default({}),
      stream: z
        .boolean()
        .default(true)
        .describe('Ask the server to stream (tokens reach clients as they are written); false for servers that cannot'),
    })
    .strict(),
]);
export type ModelSpec = z.infer<typeof ModelSpec>;

/** How long a waitpoint waits unless the agent says otherwise (24 h), and at most (30 days). */
export const DEFAULT_WAITPOINT_TTL_SECONDS = 24 * 3600;
export const MAX_WAITPOINT_TTL_SECONDS = 30 * 24 * 3600;
/** A waitpoint's time to live, in seconds (1 s to 30 days). */
export const WaitpointTtlSeconds = z.number().int().min(1).max(MAX_WAITPOINT_TTL_SECONDS);

/** Per-agent settings of a tool, sent to the executor with each call of that agent (never to the model). */
export const AgentToolConfig = z
  .object({
    allowHosts: z
      .array(z.string().min(1).max(253))
      .max(256)
      .optional()
      .describe('http.request: hosts this agent may reach ("api.example.com", or "*.example.com" for subdomains)'),
    honoursIdempotencyKey: z
      .boolean()
      .optional()
      .describe(
        'http.request: the allowed hosts deduplicate by the Idempotency-Key header, so a POST/PUT/PATCH/DELETE may be retried (idempotent); otherwise it is at-most-once',
      ),
    waitpoint: z
      .object({
        ttlSeconds: WaitpointTtlSeconds.default(DEFAULT_WAITPOINT_TTL_SECONDS).describe(
          'How long the run waits for the completion (default 24 h, at most 30 days)',
        ),
        onExpiry: WaitpointOnExpiry.default('tool_error').describe(
          'tool_error: the model is told `waitpoint.expired`; fail_run: the run fails',
        ),
        result: JsonObject.optional().describe('The JSON Schema a completion result must fit (any JSON without it)'),
      })
      .strict()
      .optional()
      .describe(
        'Tools that open waitpoints (wait.external, a remote service described with opensWaitpoint): how the run waits for the outside world to complete the call',
      ),
  })
  .strict();
export type AgentToolConfig = z.infer<typeof AgentToolConfig>;

/**
 * One test on a call's arguments, e.g. `{ arg: 'amount', op: 'gt', value: 100 }`. Data, never code: no
 * expression is evaluated. `arg` is a dotted path into the arguments (`payment.amount`). The numeric
 * operators compare numbers (a numeric string such as "150" counts as its number); when the argument is
 * missing or not a number, the condition holds, so a malformed call asks a human instead of slipping by.
 */
export const ApprovalConditionTest = z
  .object({
    arg: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'a dotted argument path like "amount" or "payment.amount"'),
    op: z.enum(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'exists']),
    value: Json.optional().describe('Compared value; a number for gt/gte/lt/lte, a list for in, absent for exists'),
  })
  .strict()
  .superRefine((t, ctx) => {
    const numeric = t.op === 'gt' || t.op === 'gte' || t.op === 'lt' || t.op === 'lte';
    if (numeric && typeof t.value !== 'number')
      ctx.addIssue({ code: 'custom', path: ['value'], message: `"${t.op}" needs a number` });
    if (t.op === 'in' && !Array.isArray(t.value))
      ctx.addIssue({ code: 'custom', path: ['value'], message: '"in" needs a list of values' });
    if ((t.op === 'eq' || t.op === 'ne') && t.value === undefined)
      ctx.addIssue({ code: 'custom', path: ['value'], message: `"${t.op}" needs a value` });
    if (t.op === 'exists' && t.value !== undefined)
      ctx.addIssue({ code: 'custom', path: ['value'], message: '"exists" takes no value' });
  });
export type ApprovalConditionTest = z.infer<typeof ApprovalConditionTest>;

/** One test, or a list of tests of which any one holding asks for approval. */
export const ApprovalCondition = z.union([ApprovalConditionTest, z.array(ApprovalConditionTest).min(1).max(32)]);
export type ApprovalCondition = z.infer<typeof ApprovalCondition>;

/** How long an approval waits for a decision unless the tool's policy says otherwise: 72 h. */
export const DEFAULT_APPROVAL_EXPIRY_SECONDS = 72 * 3600;

export const ToolApprovalPolicy = z
  .object({
    when: z
      .enum(['never', 'always', 'if'])
      .default('never')
      .describe('"if": only calls whose arguments meet `condition` wait for a human'),
    condition: ApprovalCondition.optional().describe('With when: if, the test(s) on the arguments'),
    role: z.string().default('approver').describe('The role a principal needs to decide'),
    expiresInSeconds: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_APPROVAL_EXPIRY_SECONDS)
      .describe('How long a human has to decide (72 h by default: a wait of days costs the run nothing)'),
    fourEyes: z.boolean().default(false).describe("The run's principal may not approve its own call"),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.when === 'if' && p.condition === undefined)
      ctx.addIssue({ code: 'custom', path: ['condition'], message: 'when: if needs a condition' });
    if (p.when !== 'if' && p.condition !== undefined)
      ctx.addIssue({ code: 'custom', path: ['when'], message: 'a condition needs when: if' });
  });
export type ToolApprovalPolicy = z.infer<typeof ToolApprovalPolicy>;

export const AgentToolSpec = z
  .object({
    name: ToolRef,
    approval: ToolApprovalPolicy.default({
      when: 'never',
      role: 'approver',
      expiresInSeconds: DEFAULT_APPROVAL_EXPIRY_SECONDS,
      fourEyes: false,
    }),
    config: AgentToolConfig.optional().describe('Per-agent settings the tool executor receives with each call'),
    roles: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(16)
      .optional()
      .describe(
        "The roles that may use the tool: the run's principal must hold one of them when the call starts and again when an approved call runs",
      ),
  })
  .strict();

/** A key expression over a run request's metadata, `metadata.<field>` (a slot's, a throttle's, a debounce's). */
const metadataKeyExpression = (example: string) =>
  z
    .string()
    .max(200)
    .regex(
      /^metadata\.[A-Za-z0-9_-]+$/,
      `an expression over the request's metadata like "metadata.${example}" (metadata.<field>)`,
    );

/**
 * A concurrency key of the agent's runs (ADR 0045, docs/flow-control.md#concurrency-keys): at most `max`
 * runs of the tenant in flight at once per value of `key`, an expression over the run request's metadata
 * (`metadata.customerId`); runs past it wait for admission, served round-robin across values.
 */
export const AgentSlot = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[a-z][a-z0-9_-]*$/, 'lower-case name like "customer"'),
    key: metadataKeyExpression('customerId'),
    max: z.number().int().positive().max(1_000_000).describe('The most runs in flight at once per value of the key'),
  })
  .strict();
export type AgentSlot = z.infer<typeof AgentSlot>;

/**
 * A throttle on the agent's run starts (docs/flow-control.md#throttle): at most `limit` runs of the tenant
 * start in any `periodSeconds`, per value of `key` (an expression over the run request's metadata) or, without
 * a key, for the agent as a whole; later requests wait for admission (they are not refused).
 */
export const AgentThrottle = z
  .object({
    limit: z.number().int().positive().max(1_000_000).describe('The most runs that start in any period'),
    periodSeconds: z
      .number()
      .int()
      .positive()
      .max(86_400)
      .describe('The length of the window the starts are counted in, in seconds (1 s to a day)'),
    key: metadataKeyExpression('userId')
      .optional()
      .describe("Counted per value of this expression over the request's metadata; absent: for the agent as a whole"),
  })
  .strict();
export type AgentThrottle = z.infer<typeof AgentThrottle>;

/**
 * A debounce of the agent's run requests (docs/flow-control.md#debounce): of the requests for one value of
 * `key` (or for the agent as a whole) that come less than `periodSeconds` apart, only the last runs; it
 * starts `periodSeconds` after its request, and the earlier ones end as superseded.
 */
export const AgentDebounce = z
  .object({
    periodSeconds: z
      .number()
      .int()
      .positive()
      .max(86_400)
      .describe('How long a request waits for a later one of its key before its run starts, in seconds (1 s to a day)'),
    key: metadataKeyExpression('documentId')
      .optional()
      .describe("Debounced per value of this expression over the request's metadata; absent: for the agent as a whole"),
  })
  .strict();
export type AgentDebounce = z.infer<typeof AgentDebounce>;

/** An agent: what model it uses, what it may call, and its limits. Stored versioned; runs pin a version. */
export const AgentDefinition = z
  .object({
    name: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[a-z][a-z0-9_-]*$/, 'lower-case name like "demo"'),
    description: z.string().max(2000).default(''),
    instructions: z.string().max(100_000).default(''),
    model: ModelSpec,
    tools: z.array(AgentToolSpec).default([]),
    maxSteps: z.number().int().positive().max(1000).default(10),
    stepTimeoutSeconds: z
      .number()
      .int()
      .positive()
      .max(86_400)
      .default(300)
      .describe(
        'How long one model call may take before it is aborted and retried (and how long a step may show no progress); see docs/models.md',
      ),
    modelAttempts: z
      .number()
      .int()
      .min(1)
      .max(20)
      .default(3)
      .describe('Attempts per model call of a step (errors, timeouts and lost workers count); past them the run fails'),
    runTimeoutSeconds: z
      .number()
      .int()
      .positive()
      .default(3600)
      .describe(
        "The run's working-time budget: time from its start, leaving out its waits for a human (approvals, uncertain effects); past it the run fails with budget.exceeded",
      ),
    priority: RunPriority.optional().describe(
      "The priority of the agent's runs in the admission queue, in seconds (-600 to 600): a held run is served as if requested this much earlier; a request may lower it, and raise it only with the admin role. Absent: 0",
    ),
    queueTtlSeconds: z
      .number()
      .int()
      .positive()
      .max(2_592_000)
      .optional()
      .describe(
        "How long a run may wait to start after its request (queued for admission past a bound or a concurrency key, or behind its thread's run); past it the run fails as run.queue_expired (retryable). Absent: runs wait until they start",
      ),
    budget: z
      .object({
        modelCalls: z
          .number()
          .int()
          .positive()
          .max(100_000)
          .optional()
          .describe('Model calls per run, every attempt counted; default maxSteps × modelAttempts'),
        tokens: z
          .number()
          .int()
          .positive()
          .default(2_000_000)
          .describe('Tokens per run (input + output as the provider reports them)'),
        rateLimitWaitSeconds: z
          .number()
          .int()
          .nonnegative()
          .max(604_800)
          .default(1800)
          .describe(
            "How long a run may wait out the provider's 429s (Retry-After) in all; those waits are not attempts. Past it the run fails with model.rate_limited",
          ),
      })
      .strict()
      .default({ tokens: 2_000_000, rateLimitWaitSeconds: 1800 }),
    context: z
      .object({
        maxMessages: z
          .number()
          .int()
          .positive()
          .optional()
          .describe('Send the model at most the last N messages of the conversation'),
        maxTokens: z
          .number()
          .int()
          .positive()
          .optional()
          .describe('Send the model at most about this many tokens of the conversation (4 characters a token)'),
      })
      .strict()
      .default({})
      .describe('What of the conversation the model is sent; the log keeps all of it'),
    memory: z
      .object({ recall: z.boolean().default(false) })
      .strict()
      .default({ recall: false }),
    slots: z
      .array(AgentSlot)
      .max(4)
      .optional()
      .superRefine((slots, ctx) => {
        const names = (slots ?? []).map((s) => s.name);
        const twice = names.find((n, i) => names.indexOf(n) !== i);
        if (twice) ctx.addIssue({ code: 'custom', message: `slot "${twice}" is declared twice` });
      })
      .describe(
        'Concurrency keys: at most `max` runs of the tenant in flight per value of `key` (e.g. per customer); several apply together. Not the thread policy `concurrency`.',
      ),
    debounce: AgentDebounce.optional().describe(
      "Of the tenant's requests for one key that come less than `periodSeconds` apart, only the last runs, `periodSeconds` after it; the others end as superseded",
    ),
    throttle: AgentThrottle.optional().describe(
      "At most `limit` of the tenant's runs of this agent start in any `periodSeconds` (per value of `key` when given); later requests are held for admission",
    ),
  })
  .strict();
export type AgentDefinition = z.infer<typeof AgentDefinition>;
export type AgentDefinitionInput = z.input<typeof AgentDefinition>;
