import type { ChatMessage, Failure, Json, JsonObject, ToolCall, ToolSpec, Usage } from '@ratchet/contracts';
import type { ModelOutcome } from '@ratchet/domain';
import type { WireMessage, WireRequest, WireTool, WireToolCall } from './openai.wire';

/**
 * Pure mapping between Ratchet's provider-neutral chat and the OpenAI Chat Completions wire format.
 * No I/O here: everything is testable with plain values (openai.mapping.spec.ts).
 */

/** OpenAI's function-name pattern. Our tool names (`demo.weather`) contain dots, which it refuses. */
export const WIRE_TOOL_NAME = /^[a-zA-Z0-9_-]+$/;

/** `demo.weather` → `demo__weather`. */
export function toWireToolName(name: string): string {
  return name.replaceAll('.', '__');
}

/** `demo__weather` → `demo.weather`: the inverse of toWireToolName for names without `__` of their own. */
export function fromWireToolName(name: string): string {
  return name.replaceAll('__', '.');
}

/**
 * The names offered in one request, both ways. The response is mapped back through this table rather
 * than by fromWireToolName alone, so the mapping is exact (a tool named `a__b` stays `a__b`) and a call to
 * a tool that was not offered is detected. Two tools whose wire names collide (`a.b` and `a__b`) cannot be
 * offered together: that is a configuration error, reported before anything is sent.
 */
export interface ToolNameTable {
  toWire: ReadonlyMap<string, string>;
  fromWire: ReadonlyMap<string, string>;
}

export function buildToolNameTable(tools: readonly ToolSpec[]): ToolNameTable | { error: Failure } {
  const toWire = new Map<string, string>();
  const fromWire = new Map<string, string>();
  for (const tool of tools) {
    const wire = toWireToolName(tool.name);
    if (!WIRE_TOOL_NAME.test(wire)) {
      return {
        error: {
          code: 'invalid_tool_name',
          message: `tool "${tool.name}" cannot be offered to an OpenAI-compatible model: after mapping "." to "__" its name must match ${WIRE_TOOL_NAME.source}`,
          retryable: false,
        },
      };
    }
    const other = fromWire.get(wire);
    if (other !== undefined && other !== tool.name) {
      return {
        error: {
          code: 'tool_name_collision',
          message: `tools "${other}" and "${tool.name}" both map to the function name "${wire}"; rename one of them`,
          retryable: false,
        },
      };
    }
    toWire.set(tool.name, wire);
    fromWire.set(wire, tool.name);
  }
  return { toWire, fromWire };
}

export function toWireMessages(messages: readonly ChatMessage[]): WireMessage[] {
  return messages.map((m): WireMessage => {
    switch (m.role) {
      case 'system':
      case 'user':
        return { role: m.role, content: m.content };
      case 'assistant':
        return m.toolCalls.length === 0
          ? { role: 'assistant', content: m.content }
          : { role: 'assistant', content: m.content, tool_calls: m.toolCalls.map(toWireToolCall) };
      case 'tool':
        // Errors are already spelled out in `content` ({"error": …}); the wire has no error flag.
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    }
  });
}

function toWireToolCall(call: ToolCall): WireToolCall {
  return {
    id: call.id,
    type: 'function',
    function: { name: toWireToolName(call.name), arguments: JSON.stringify(call.args) },
  };
}

const EMPTY_OBJECT_SCHEMA: JsonObject = { type: 'object', properties: {} };

export function toWireTools(tools: readonly ToolSpec[]): WireTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: {
      name: toWireToolName(t.name),
      description: t.description,
      // `{}` is a valid JSON Schema, but some servers insist on an object schema for function parameters.
      parameters: Object.keys(t.parameters).length === 0 ? EMPTY_OBJECT_SCHEMA : t.parameters,
    },
  }));
}

/**
 * The body of `POST /chat/completions`. The agent's `parameters` come first so they can never replace
 * the model, the transcript, the tools or turn on streaming (this client reads one JSON response).
 */
export function buildRequestBody(
  model: string,
  parameters: Readonly<Record<string, Json>>,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
): WireRequest {
  const body: WireRequest = { ...parameters, model, messages: toWireMessages(messages), stream: false };
  if (tools.length > 0) body.tools = toWireTools(tools);
  else delete body.tools; // an empty `tools` array is refused by some servers
  return body;
}

export interface ParseContext {
  tools: ToolNameTable;
  /** Used to name tool calls that arrive without an id (some local servers omit it). */
  step: number;
  /** Reported as the model when the response does not name one. */
  fallbackModel: string;
}

/**
 * Reads a 2xx response body. Never throws: anything we cannot turn into a valid ModelOutcome is a
 * `malformed_response` error outcome.
 *
 * Every malformed response is `retryable: true`. Sampling is not deterministic, and the usual causes are
 * transient: a model that emitted truncated or invalid JSON arguments or invented a tool name usually
 * gets it right on the next try, and a body that is not JSON or has no choices is typically a proxy or
 * server hiccup. The decider bounds model attempts (MAX_MODEL_ATTEMPTS), so a model that keeps getting
 * it wrong still fails the run, with this error, after a few attempts. Messages name the tool and the
 * call id at most, never the arguments or the text (they may carry prompt content).
 */
export function parseCompletion(text: string, ctx: ParseContext): ModelOutcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return malformed('the response body is not JSON');
  }
  if (!isObject(body)) return malformed('the response body is not a JSON object');
  const choices = body['choices'];
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (!isObject(first)) {
    const providerMessage = errorMessageOf(body);
    return malformed(
      providerMessage
        ? `the response has no choices; the provider said: ${providerMessage}`
        : 'the response has no choices',
    );
  }
  const message = first['message'];
  if (!isObject(message)) return malformed('the first choice has no message');

  const rawCalls = message['tool_calls'];
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) {
    return malformed('tool_calls is not an array');
  }
  const toolCalls: ToolCall[] = [];
  const seen = new Set<string>();
  const list: unknown[] = Array.isArray(rawCalls) ? rawCalls : [];
  for (const [i, raw] of list.entries()) {
    const call = readToolCall(raw, i, ctx);
    if ('problem' in call) return malformed(call.problem);
    if (seen.has(call.id)) return malformed(`two tool calls share the id "${clip(call.id)}"`);
    seen.add(call.id);
    toolCalls.push(call);
  }

  let content = readContent(message['content']);
  if (content === undefined) return malformed('the message content is neither text nor null');
  if (content === null && toolCalls.length === 0 && typeof message['refusal'] === 'string') {
    content = message['refusal'];
  }
  if (content === '' && toolCalls.length > 0) content = null;

  const model = typeof body['model'] === 'string' && body['model'] !== '' ? body['model'] : ctx.fallbackModel;
  return { status: 'ok', content, toolCalls, usage: readUsage(body['usage']), model };
}

function readToolCall(raw: unknown, index: number, ctx: ParseContext): ToolCall | { problem: string } {
  const n = index + 1;
  if (!isObject(raw)) return { problem: `tool call ${n} is not an object` };
  if (raw['type'] !== undefined && raw['type'] !== 'function') {
    return { problem: `tool call ${n} has unsupported type "${clip(String(raw['type']))}"` };
  }
  const fn = raw['function'];
  if (!isObject(fn) || typeof fn['name'] !== 'string') return { problem: `tool call ${n} has no function name` };
  const id = typeof raw['id'] === 'string' && raw['id'] !== '' ? raw['id'] : `call_${ctx.step}_${n}`;
  if (id.length > 128) return { problem: `tool call ${n} has an id longer than 128 characters` };
  const name = ctx.tools.fromWire.get(fn['name']);
  if (name === undefined) {
    return { problem: `the model called "${clip(fn['name'])}", a tool that was not offered` };
  }
  const args = readArguments(fn['arguments']);
  if (args === undefined) {
    return { problem: `the arguments of tool call "${clip(id)}" to ${name} are not a valid JSON object` };
  }
  return { id, name, args };
}

/** Arguments arrive as a JSON string (OpenAI); a few servers send the object itself or "" for none. */
function readArguments(raw: unknown): JsonObject | undefined {
  if (raw === undefined || raw === null) return {};
  if (isObject(raw)) return raw as JsonObject;
  if (typeof raw !== 'string') return undefined;
  if (raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return isObject(parsed) ? (parsed as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

/** `string | null`, or content parts (`[{type: 'text', text}]`) joined; undefined when it is neither. */
function readContent(raw: unknown): string | null | undefined {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === 'string') return raw;
  if (Array.isArray(raw)) {
    let text = '';
    for (const part of raw) {
      if (isObject(part) && typeof part['text'] === 'string') text += part['text'];
      else return undefined;
    }
    return text;
  }
  return undefined;
}

/** Servers that do not report usage (or report nonsense) are recorded as 0 tokens, never as a failure. */
function readUsage(raw: unknown): Usage {
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.trunc(v) : 0);
  if (!isObject(raw)) return { inputTokens: 0, outputTokens: 0 };
  return { inputTokens: count(raw['prompt_tokens']), outputTokens: count(raw['completion_tokens']) };
}

/**
 * The provider's own error message from an error body, in the shapes the servers use:
 * `{error: {message}}` (OpenAI, llama.cpp), `{error: "…"}` (Ollama), `{message}` (vLLM), `{detail}`.
 */
export function errorMessageOf(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body['error'];
  if (typeof error === 'string' && error !== '') return error;
  if (isObject(error) && typeof error['message'] === 'string' && error['message'] !== '') return error['message'];
  for (const key of ['message', 'detail']) {
    if (typeof body[key] === 'string' && body[key] !== '') return body[key];
  }
  return undefined;
}

/** The provider's error code (`insufficient_quota`, `rate_limit_exceeded`, …) when it gives one. */
export function errorCodeOf(body: unknown): string | undefined {
  if (!isObject(body) || !isObject(body['error'])) return undefined;
  const code = body['error']['code'] ?? body['error']['type'];
  return typeof code === 'string' ? code : undefined;
}

function malformed(message: string): ModelOutcome {
  return { status: 'error', error: { code: 'malformed_response', message, retryable: true } };
}

function clip(s: string, max = 64): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
