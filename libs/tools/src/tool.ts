import { z } from 'zod';
import type { Json, JsonObject, Principal, ToolSpec } from '@ratchet/contracts';

/**
 * How safe a tool is to repeat after a crash:
 * - `pure`: no external effect; may run again.
 * - `idempotent`: the outside world dedups by the idempotency key the tool passes on.
 * - `at-most-once`: must never run twice; a crash mid-effect escalates to a human.
 */
export type ToolKind = 'pure' | 'idempotent' | 'at-most-once';

export interface ToolLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** What a tool may know. Nothing here reaches another tenant's data. */
export interface ToolContext {
  idempotencyKey: string;
  tenantId: string;
  threadId: string;
  runId: string;
  callId: string;
  principal: Principal;
  signal: AbortSignal;
  logger: ToolLogger;
}

export interface ToolDefinition<I extends z.ZodType<JsonObject> = z.ZodType<JsonObject>> {
  name: string;
  description: string;
  input: I;
  output?: z.ZodType<Json>;
  kind: ToolKind;
  timeoutMs: number;
  retry: { attempts: number; backoffMs: number };
  /** Asks the outside world whether an effect with this key happened (after a crash mid-effect). */
  reconcile?: (args: z.infer<I>, ctx: ToolContext) => Promise<{ happened: true; result: Json } | { happened: false }>;
  execute(args: z.infer<I>, ctx: ToolContext): Promise<Json>;
}

export type AnyTool = ToolDefinition<z.ZodType<JsonObject>>;

export function defineTool<I extends z.ZodType<JsonObject>>(
  def: Omit<ToolDefinition<I>, 'timeoutMs' | 'retry'> & Partial<Pick<ToolDefinition<I>, 'timeoutMs' | 'retry'>>,
): ToolDefinition<I> {
  if (!/^[a-z][a-z0-9_.-]*$/.test(def.name))
    throw new Error(`tool name ${JSON.stringify(def.name)} must be lower-case like "demo.weather"`);
  return { timeoutMs: 30_000, retry: { attempts: 3, backoffMs: 200 }, ...def };
}

/** The JSON Schema of a tool's arguments: what the model sees. */
export function toolSpec(tool: AnyTool): ToolSpec {
  const schema = z.toJSONSchema(tool.input, { target: 'draft-2020-12', io: 'input' }) as Record<string, Json>;
  delete schema['$schema'];
  return { name: tool.name, description: tool.description, parameters: schema };
}

/** Tool failures in a shape the model can read. `retryable` failures are retried with backoff first. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
