import { z } from 'zod';
import { Failure, HEADERS, Json, type JsonObject } from '@ratchet/contracts';
import { defineTool, ToolError, type AnyTool, type ToolContext, type ToolKind } from './tool';

/** Headers a remote tool receives with every request (see docs/tools.md). */
export const REMOTE_TOOL_HEADERS = {
  idempotencyKey: HEADERS.idempotencyKey,
  tenant: HEADERS.tenant,
  thread: 'Ratchet-Thread',
  run: 'Ratchet-Run',
  call: 'Ratchet-Call',
  principal: 'Ratchet-Principal',
  attempt: 'Ratchet-Attempt',
} as const;

/** The request body: the arguments and the agent's config for the tool. */
export const RemoteToolRequest = z.object({ args: z.record(z.string(), Json), config: z.record(z.string(), Json) });
/** The reply body. `mayHaveActed` on an error: the effect may have happened anyway. */
export const RemoteToolReply = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), result: Json }),
  z.object({ ok: z.literal(false), error: Failure.extend({ mayHaveActed: z.boolean().optional() }) }),
]);
export type RemoteToolReply = z.infer<typeof RemoteToolReply>;

/** How the executor reaches a remote tool: a NATS request on `<prefix>.toolsvc.<name>`. */
export interface RemoteToolTransport {
  request(
    tool: string,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<
    { ok: true; data: string } | { ok: false; reason: 'no_responders' | 'timeout' | 'error'; message: string }
  >;
}

export interface RemoteToolDeclaration {
  name: string;
  kind: ToolKind;
  timeoutMs?: number;
  description?: string;
}

/**
 * `REMOTE_TOOLS=name:kind[:timeoutMs],...` (e.g. `crm.create_ticket:at-most-once:5000,weather.now:pure`).
 * Throws with a message naming the bad entry.
 */
export function parseRemoteTools(spec: string | undefined): RemoteToolDeclaration[] {
  const out: RemoteToolDeclaration[] = [];
  for (const part of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, kind, timeout] = part.split(':');
    if (!name || !/^[a-z][a-z0-9_.-]*$/.test(name)) throw new Error(`REMOTE_TOOLS: bad tool name in "${part}"`);
    if (kind !== 'pure' && kind !== 'idempotent' && kind !== 'at-most-once')
      throw new Error(`REMOTE_TOOLS: "${part}": kind must be pure, idempotent or at-most-once`);
    const timeoutMs = timeout === undefined ? undefined : Number(timeout);
    if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0))
      throw new Error(`REMOTE_TOOLS: "${part}": timeout must be a positive integer (ms)`);
    out.push({ name, kind, ...(timeoutMs ? { timeoutMs } : {}) });
  }
  return out;
}

/**
 * A tool served by another service. The executor treats it like a local tool: same ledger, same
 * retries; the key travels in `Ratchet-Idempotency-Key`. The model sees an open object schema unless
 * an input schema is given.
 */
export function remoteTool(
  decl: RemoteToolDeclaration & { input?: z.ZodType<JsonObject> },
  transport: RemoteToolTransport,
): AnyTool {
  const timeoutMs = decl.timeoutMs ?? 10_000;
  return {
    ...defineTool({
      name: decl.name,
      description: decl.description ?? `Remote tool ${decl.name}.`,
      kind: decl.kind,
      timeoutMs: timeoutMs + 1000,
      retry: decl.kind === 'at-most-once' ? { attempts: 1, backoffMs: 0 } : { attempts: 3, backoffMs: 200 },
      input: decl.input ?? z.record(z.string(), Json),
      execute: (args, ctx) => callRemote(decl.name, decl.kind, args, ctx, transport, timeoutMs),
    }),
    remote: true,
  };
}

async function callRemote(
  name: string,
  kind: ToolKind,
  args: JsonObject,
  ctx: ToolContext,
  transport: RemoteToolTransport,
  timeoutMs: number,
): Promise<Json> {
  const headers: Record<string, string> = {
    [REMOTE_TOOL_HEADERS.idempotencyKey]: ctx.idempotencyKey,
    [REMOTE_TOOL_HEADERS.tenant]: ctx.tenantId,
    [REMOTE_TOOL_HEADERS.thread]: ctx.threadId,
    [REMOTE_TOOL_HEADERS.run]: ctx.runId,
    [REMOTE_TOOL_HEADERS.call]: ctx.callId,
    [REMOTE_TOOL_HEADERS.principal]: ctx.principal.id,
    [REMOTE_TOOL_HEADERS.attempt]: String(ctx.attempt),
  };
  const body = JSON.stringify({ args, config: ctx.config });
  const answer = await transport.request(name, body, headers, timeoutMs);
  if (!answer.ok) {
    // No responder: the request reached nobody, so nothing happened. A timeout: it may have.
    const mayHaveActed = answer.reason !== 'no_responders';
    throw new ToolError(`remote.${answer.reason}`, `${name}: ${answer.message}`, true, { mayHaveActed });
  }
  let reply: RemoteToolReply;
  try {
    reply = RemoteToolReply.parse(JSON.parse(answer.data));
  } catch (error) {
    throw new ToolError('remote.bad_reply', `${name} answered with an invalid reply`, false, {
      mayHaveActed: kind !== 'pure',
      cause: error,
    });
  }
  if (reply.ok) return reply.result;
  throw new ToolError(reply.error.code, reply.error.message, reply.error.retryable, {
    mayHaveActed: reply.error.mayHaveActed ?? false,
  });
}
