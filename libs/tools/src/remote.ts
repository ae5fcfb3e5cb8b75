import { z } from 'zod';
import {
  Json,
  REMOTE_TOOL_HEADERS,
  RemoteReconcileResult,
  RemoteToolDescription,
  remoteToolCancelSubject,
  RemoteToolReply,
  RemoteWaitpointOpened,
  type JsonObject,
  type RemoteToolCancel,
} from '@ratchet/contracts';
import { compileInputSchema, jsonSchemaInput, modelParameters } from './json-schema';
import { defineTool, ToolError, type AnyTool, type ToolContext, type ToolKind } from './tool';
import { openWaitpoint, waitpointIdOf } from './waitpoints';

// The contract itself (headers, bodies, the description) is part of the wire language: it is exported
// by @ratchet/contracts only.

/** How the executor reaches a remote tool: a NATS request on the tool's subject. */
export interface RemoteToolTransport {
  /** The request; with `signal`, it stops waiting when the signal fires (`aborted`). */
  request(
    subject: string,
    body: string,
    headers: Record<string, string>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<
    | { ok: true; data: string }
    | { ok: false; reason: 'no_responders' | 'timeout' | 'error' | 'aborted'; message: string }
  >;
  /** Publishes a cancel notice (`RemoteToolCancel`) on `subject`; best effort, never throws. */
  cancel?(subject: string, body: string, headers: Record<string, string>): void;
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
 * A tool served by another service, declared by configuration (`REMOTE_TOOLS`). The executor treats it
 * like any tool: same ledger, same retries; the key travels in `Ratchet-Idempotency-Key`. The model
 * sees an open object schema (a service that describes itself gives its real one: `describedRemoteTool`).
 */
export function remoteTool(
  decl: RemoteToolDeclaration & { input?: z.ZodType<JsonObject> },
  transport: RemoteToolTransport,
  subject: string,
): AnyTool {
  const timeoutMs = decl.timeoutMs ?? 10_000;
  return {
    ...defineTool({
      name: decl.name,
      description: decl.description ?? `Remote tool ${decl.name}.`,
      kind: decl.kind,
      timeoutMs: timeoutMs + 1000,
      retry: retryFor(decl.kind),
      input: decl.input ?? z.record(z.string(), Json),
      execute: (args, ctx) => callRemote(subject, decl.name, decl.kind, args, ctx, transport, timeoutMs),
    }),
    remote: true,
    source: `remote:${subject}`,
  };
}

/** A described remote tool that cannot be offered: the description or its schema is not acceptable. */
export class RemoteDescriptionError extends Error {
  constructor(
    readonly code: 'remote.bad_description' | 'remote.invalid_schema' | 'remote.name_mismatch',
    readonly subject: string,
    message: string,
  ) {
    super(`${subject}: ${message}`);
    this.name = 'RemoteDescriptionError';
  }
}

/** Checks a `describe` answer for the tool served on `subject` (whose last tokens are `expectedName`). */
export function parseRemoteDescription(subject: string, expectedName: string, raw: unknown): RemoteToolDescription {
  const reply = RemoteToolReply.safeParse(raw);
  if (!reply.success || !reply.data.ok)
    throw new RemoteDescriptionError(
      'remote.bad_description',
      subject,
      reply.success && !reply.data.ok
        ? `describe failed: ${reply.data.error.code}: ${reply.data.error.message}`
        : 'the describe answer is not { ok, result }',
    );
  const parsed = RemoteToolDescription.safeParse(reply.data.result);
  if (!parsed.success)
    throw new RemoteDescriptionError(
      'remote.bad_description',
      subject,
      `invalid description: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  if (parsed.data.name !== expectedName)
    throw new RemoteDescriptionError(
      'remote.name_mismatch',
      subject,
      `describes a tool named ${parsed.data.name} on the subject of ${expectedName}`,
    );
  const compiled = compileInputSchema(parsed.data.inputSchema);
  if (!compiled.ok)
    throw new RemoteDescriptionError('remote.invalid_schema', subject, `inputSchema: ${compiled.problem}`);
  return parsed.data;
}

/**
 * A tool a service described itself (`Ratchet-Op: describe`): the model sees its input schema, and
 * arguments are validated against it before anything is sent. With `reconcile`, a call that died
 * mid-effect asks the service (`Ratchet-Op: reconcile`) whether the effect with its key happened.
 */
export function describedRemoteTool(
  description: RemoteToolDescription,
  subject: string,
  transport: RemoteToolTransport,
): AnyTool {
  const compiled = compileInputSchema(description.inputSchema);
  if (!compiled.ok)
    throw new RemoteDescriptionError('remote.invalid_schema', subject, `inputSchema: ${compiled.problem}`);
  const { name, kind, timeoutMs } = description;
  const tool: AnyTool = {
    ...defineTool({
      name,
      description: description.description,
      kind,
      timeoutMs: timeoutMs + 1000,
      retry: retryFor(kind),
      input: jsonSchemaInput(compiled.validate),
      execute: description.opensWaitpoint
        ? (args, ctx) => openRemoteWaitpoint(subject, name, kind, args, ctx, transport, timeoutMs)
        : (args, ctx) => callRemote(subject, name, kind, args, ctx, transport, timeoutMs),
    }),
    parameters: modelParameters(description.inputSchema),
    remote: true,
    source: `remote:${subject}`,
    ...(description.opensWaitpoint ? { opensWaitpoint: true } : {}),
  };
  if (description.reconcile) {
    tool.reconcile = async (args, ctx) => {
      const answer = await requestRemote(
        subject,
        name,
        'reconcile',
        args,
        ctx,
        transport,
        timeoutMs,
        kind,
        description.opensWaitpoint ? waitpointHeader(ctx) : {},
      );
      const parsed = RemoteReconcileResult.safeParse(answer);
      // An answer that says nothing clear is no proof either way: the call escalates.
      if (!parsed.success)
        throw new ToolError('remote.bad_reconcile', `${name} answered reconcile with an invalid result`, false, {
          mayHaveActed: true,
        });
      if (!description.opensWaitpoint || !parsed.data.happened) return parsed.data;
      // The job started: what it answered then (its terms) opens the call's waitpoint, as the call would have.
      const opened = RemoteWaitpointOpened.safeParse(parsed.data.result);
      if (!opened.success)
        throw new ToolError('remote.bad_reconcile', `${name} reconciled a job without its waitpoint terms`, false, {
          mayHaveActed: true,
        });
      return { happened: true, result: openWaitpoint(ctx, opened.data.waitpoint) };
    };
  }
  return tool;
}

/** The header naming the waitpoint a call opens (the same on every attempt: it derives from the call). */
function waitpointHeader(ctx: ToolContext): Record<string, string> {
  return { [REMOTE_TOOL_HEADERS.waitpoint]: waitpointIdOf(ctx) };
}

function retryFor(kind: ToolKind) {
  return kind === 'at-most-once' ? { attempts: 1, backoffMs: 0 } : { attempts: 3, backoffMs: 200 };
}

function callRemote(
  subject: string,
  name: string,
  kind: ToolKind,
  args: JsonObject,
  ctx: ToolContext,
  transport: RemoteToolTransport,
  timeoutMs: number,
): Promise<Json> {
  return requestRemote(subject, name, undefined, args, ctx, transport, timeoutMs, kind);
}

/**
 * A call of a tool that opens waitpoints (docs/waitpoints.md#remote-tool-services): the request names the
 * waitpoint (`Ratchet-Waitpoint`, derived from the call, so every attempt names the same one); the service
 * starts the job, answers its terms (`RemoteWaitpointOpened`) and completes the waitpoint later. An answer
 * that is not such terms is the service's fault: after a job that may have started (any kind but pure),
 * the call is not one the model may simply repeat.
 */
async function openRemoteWaitpoint(
  subject: string,
  name: string,
  kind: ToolKind,
  args: JsonObject,
  ctx: ToolContext,
  transport: RemoteToolTransport,
  timeoutMs: number,
): Promise<Json> {
  const answer = await requestRemote(
    subject,
    name,
    undefined,
    args,
    ctx,
    transport,
    timeoutMs,
    kind,
    waitpointHeader(ctx),
  );
  const opened = RemoteWaitpointOpened.safeParse(answer);
  if (!opened.success)
    throw new ToolError(
      'remote.bad_reply',
      `${name} opens waitpoints but answered no valid { waitpoint: { ttlSeconds?, resultSchema? } }: ${opened.error.issues
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ')}`,
      false,
      { mayHaveActed: kind !== 'pure' },
    );
  return openWaitpoint(ctx, opened.data.waitpoint);
}

async function requestRemote(
  subject: string,
  name: string,
  op: 'reconcile' | undefined,
  args: JsonObject,
  ctx: ToolContext,
  transport: RemoteToolTransport,
  timeoutMs: number,
  kind: ToolKind = 'at-most-once',
  extraHeaders: Record<string, string> = {},
): Promise<Json> {
  const headers: Record<string, string> = {
    ...extraHeaders,
    [REMOTE_TOOL_HEADERS.idempotencyKey]: ctx.idempotencyKey,
    [REMOTE_TOOL_HEADERS.tenant]: ctx.tenantId,
    [REMOTE_TOOL_HEADERS.thread]: ctx.threadId,
    [REMOTE_TOOL_HEADERS.run]: ctx.runId,
    [REMOTE_TOOL_HEADERS.call]: ctx.callId,
    [REMOTE_TOOL_HEADERS.principal]: ctx.principal.id,
    [REMOTE_TOOL_HEADERS.attempt]: String(ctx.attempt),
    ...(op ? { [REMOTE_TOOL_HEADERS.op]: op } : {}),
  };
  const body = JSON.stringify({ args, config: ctx.config });
  const answer = await transport.request(subject, body, headers, timeoutMs, op ? undefined : ctx.signal);
  if (!answer.ok && op === undefined && (answer.reason === 'timeout' || answer.reason === 'aborted')) {
    // Nobody waits for this call's answer any more: the service is told, so it can stop the work.
    const reason =
      answer.reason === 'timeout'
        ? `no answer within ${timeoutMs} ms`
        : `the call was aborted: ${String((ctx.signal.reason as Error | undefined)?.message ?? ctx.signal.reason)}`;
    const notice: RemoteToolCancel = { reason: reason.slice(0, 1000) };
    transport.cancel?.(remoteToolCancelSubject(subject), JSON.stringify(notice), headers);
  }
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
