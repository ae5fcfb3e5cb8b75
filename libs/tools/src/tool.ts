import { z } from 'zod';
import type {
  AgentToolConfig,
  Json,
  JsonObject,
  MemoryReply,
  MemoryRequestInput,
  Principal,
  ToolSpec,
} from '@ratchet/contracts';

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

/** A tool's logger (message first) over a service's structured logger (fields first, e.g. pino). */
export function toolLogger(logger: {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}): ToolLogger {
  return {
    info: (msg, fields) => logger.info(fields ?? {}, msg),
    warn: (msg, fields) => logger.warn(fields ?? {}, msg),
  };
}

/**
 * Durable memory as a tool sees it: already bound to the call's tenant and principal, so a tool can
 * neither pick another tenant nor act as someone else (architecture §8).
 */
export interface ToolMemory {
  put(request: Omit<MemoryRequestInput<'put'>, 'principal'>): Promise<MemoryReply<'put'>>;
  search(request: Omit<MemoryRequestInput<'search'>, 'principal'>): Promise<MemoryReply<'search'>>;
}

/** What a tool may know. Nothing here reaches another tenant's data. */
export interface ToolContext {
  /** The ledger key of this logical call: pass it on to the outside world (e.g. `Idempotency-Key`). */
  idempotencyKey: string;
  tenantId: string;
  threadId: string;
  runId: string;
  /** The run's step that made this call (a call id is unique within its step). */
  step: number;
  callId: string;
  principal: Principal;
  /** The executor's clock (a tool reads time from here, never ad hoc). */
  now(): Date;
  /** Aborted on timeout: stop work and drop connections. */
  signal: AbortSignal;
  logger: ToolLogger;
  /** The calling agent's settings for this tool (`tools[].config` in its definition); `{}` when none. */
  config: AgentToolConfig;
  /** 1 on the first attempt of this delivery; retries after transient errors count up. */
  attempt: number;
  /** Memory of the call's tenant as the call's principal; absent where no memory service is wired. */
  memory?: ToolMemory | undefined;
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
  /** Result fields redacted before the result is stored or sent on (secret-looking values always are). */
  sensitive?: readonly string[];
  execute(args: z.infer<I>, ctx: ToolContext): Promise<Json>;
  /**
   * The JSON Schema the model sees, when the tool's source gave one (a remote tool service, an MCP
   * server): then `input` validates against exactly that schema. Without it, the schema is `input`'s.
   */
  parameters?: JsonObject;
  /**
   * The kind of one call when it depends on the arguments or the agent's config (e.g. `http.request`: a
   * POST is at-most-once unless the agent says the target honours `Idempotency-Key`). Never more
   * lenient than `kind` says for the call's arguments; the ledger records the kind it used.
   */
  kindOf?: (args: JsonObject, config: AgentToolConfig) => ToolKind;
  /** Where the tool comes from, for listings and errors: `builtin`, `module:<spec>`, `remote:<subject>`, `mcp:<server>`. */
  source?: string;
  /** Served by another service over NATS (`<prefix>.toolsvc.<name>`); see docs/tools.md. */
  remote?: boolean;
  /**
   * Runs in the orchestrator, inside the decision that calls it, instead of on the tool executor: the
   * call and its result are committed together (ADR 0010). Only for a `pure` tool that is cheap and does
   * no I/O — its run holds the thread's transaction — so its timeout may be at most
   * `LOCAL_TOOL_TIMEOUT_MAX_MS` (default 1,000 ms for a local tool).
   */
  local?: boolean;
  /**
   * The call does not answer with a result but opens a waitpoint (ADR 0041): `execute` returns the
   * `Waitpoint` (id, expiry, what the expiry does, the result's schema) and the run waits until the
   * outside world completes it, or it expires.
   */
  opensWaitpoint?: boolean;
}

/** The longest timeout a `local` tool may have: its run holds its thread's transaction open. */
export const LOCAL_TOOL_TIMEOUT_MAX_MS = 1000;

export type AnyTool = ToolDefinition<z.ZodType<JsonObject>>;

export function defineTool<I extends z.ZodType<JsonObject>>(
  def: Omit<ToolDefinition<I>, 'timeoutMs' | 'retry'> & Partial<Pick<ToolDefinition<I>, 'timeoutMs' | 'retry'>>,
): ToolDefinition<I> {
  if (!/^[a-z][a-z0-9_.-]*$/.test(def.name))
    throw new Error(`tool name ${JSON.stringify(def.name)} must be lower-case like "demo.weather"`);
  if (def.timeoutMs !== undefined && !(def.timeoutMs > 0)) throw new Error(`tool ${def.name}: timeoutMs must be > 0`);
  if (def.retry && !(def.retry.attempts >= 1 && def.retry.backoffMs >= 0))
    throw new Error(`tool ${def.name}: retry needs attempts >= 1 and backoffMs >= 0`);
  if (def.local) {
    if (def.kind !== 'pure') throw new Error(`tool ${def.name}: only a pure tool can be local (it is ${def.kind})`);
    if (def.remote) throw new Error(`tool ${def.name}: a remote tool cannot be local`);
    if (def.timeoutMs !== undefined && def.timeoutMs > LOCAL_TOOL_TIMEOUT_MAX_MS)
      throw new Error(`tool ${def.name}: a local tool's timeoutMs must be at most ${LOCAL_TOOL_TIMEOUT_MAX_MS}`);
  }
  const timeoutMs = def.local ? LOCAL_TOOL_TIMEOUT_MAX_MS : 30_000;
  return { timeoutMs, retry: { attempts: 3, backoffMs: 200 }, ...def };
}

/** The kind that governs one call of `tool` (its `kindOf`, else its declared kind). */
export function callKind(tool: AnyTool, args: JsonObject, config: AgentToolConfig | undefined): ToolKind {
  return tool.kindOf ? tool.kindOf(args, config ?? {}) : tool.kind;
}

/** The JSON Schema of a tool's arguments: what the model sees. */
export function toolSpec(tool: AnyTool): ToolSpec {
  if (tool.parameters) return { name: tool.name, description: tool.description, parameters: tool.parameters };
  const schema = z.toJSONSchema(tool.input, { target: 'draft-2020-12', io: 'input' }) as Record<string, Json>;
  delete schema['$schema'];
  return { name: tool.name, description: tool.description, parameters: schema };
}

/**
 * Tool failures in a shape the model can read. `retryable` failures are retried with backoff first
 * (for `at-most-once` tools only when `mayHaveActed` is false). `mayHaveActed`: the effect may have
 * happened before the failure (a lost response, a timeout after the request left): an `at-most-once`
 * tool's call then becomes `uncertain` and goes to a human instead of failing or repeating.
 */
export class ToolError extends Error {
  readonly mayHaveActed: boolean;
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
    options: { mayHaveActed?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.mayHaveActed = options.mayHaveActed ?? false;
  }
}
