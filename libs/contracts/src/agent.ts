import { z } from 'zod';
import { Json } from './messages';

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
    })
    .strict(),
  z
    .object({
      provider: z.literal('openai'),
      name: z.string().min(1),
      baseUrl: z.url().optional(),
      apiKeyEnv: z.string().default('OPENAI_API_KEY').describe('Name of the variable (a secret) holding the key'),
      parameters: z.record(z.string(), Json).default({}),
    })
    .strict(),
]);
export type ModelSpec = z.infer<typeof ModelSpec>;

/** Per-agent settings of a tool, sent to the executor with each call of that agent (never to the model). */
export const AgentToolConfig = z
  .object({
    allowHosts: z
      .array(z.string().min(1).max(253))
      .max(256)
      .optional()
      .describe('http.request: hosts this agent may reach ("api.example.com", or "*.example.com" for subdomains)'),
  })
  .strict();
export type AgentToolConfig = z.infer<typeof AgentToolConfig>;

export const AgentToolSpec = z
  .object({
    name: ToolRef,
    approval: z
      .object({
        when: z.enum(['never', 'always']).default('never'),
        role: z.string().default('approver'),
        expiresInSeconds: z.number().int().positive().default(3600),
        fourEyes: z.boolean().default(false),
      })
      .strict()
      .default({ when: 'never', role: 'approver', expiresInSeconds: 3600, fourEyes: false }),
    config: AgentToolConfig.optional().describe('Per-agent settings the tool executor receives with each call'),
  })
  .strict();

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
    stepTimeoutSeconds: z.number().int().positive().default(120),
    runTimeoutSeconds: z.number().int().positive().default(3600),
    memory: z
      .object({ recall: z.boolean().default(false) })
      .strict()
      .default({ recall: false }),
  })
  .strict();
export type AgentDefinition = z.infer<typeof AgentDefinition>;
export type AgentDefinitionInput = z.input<typeof AgentDefinition>;
