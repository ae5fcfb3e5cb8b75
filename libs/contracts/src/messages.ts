import { z } from 'zod';
import { CallId } from './ids';

/** A JSON value: what tool arguments and results are made of. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export const Json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(Json), z.record(z.string(), Json)]),
);
export const JsonObject = z.record(z.string(), Json);
export type JsonObject = z.infer<typeof JsonObject>;

export const ToolCall = z.object({ id: CallId, name: z.string().min(1).max(128), args: JsonObject });
export type ToolCall = z.infer<typeof ToolCall>;

/** The transcript a model sees: provider-neutral chat messages. */
export const ChatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    toolCalls: z.array(ToolCall).default([]),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: CallId,
    name: z.string(),
    content: z.string(),
    isError: z.boolean(),
  }),
]);
export type ChatMessage = z.infer<typeof ChatMessage>;

export const Usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  costMicros: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      "What the call cost by the deployment's price table (MODEL_PRICES), in millionths of its currency; absent: the model has no price",
    ),
});
export type Usage = z.infer<typeof Usage>;

/** A failure in a shape a model (and an operator) can read; `retryable` says whether repeating may help. */
export const Failure = z.object({
  code: z.string().min(1).max(64),
  message: z.string().max(4000),
  retryable: z.boolean().default(false),
  retryAfterMs: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('How long the provider asked to wait before a new attempt (Retry-After), when it said'),
});
export type Failure = z.infer<typeof Failure>;
