import type { Failure } from '@ratchet/contracts';
import type { ModelOutcome, ModelProvider, ModelRequest } from '@ratchet/domain';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { buildRequestBody, buildToolNameTable, parseCompletion, type ToolNameTable } from './openai.mapping';
import { readChatStream } from './openai.stream';
import { classifyFailure, parseRetryAfter, redact, retryDelayMs, sleep, type Exchange } from './openai.retry';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Looks a secret up by the variable name the agent names in `model.apiKeyEnv`. */
export type SecretResolver = (name: string) => string | undefined;

/** The part of `fetch` this client uses: undici's fetch fits, and so does a stub in a test. */
export type FetchLike = (url: string, init: FetchInit) => Promise<FetchResponseLike>;
export interface FetchInit {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  redirect: 'manual';
  dispatcher?: Dispatcher;
}
export interface FetchResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  /** The body as it arrives (streamed responses). */
  body?: AsyncIterable<Uint8Array> | null;
}

export interface OpenAiCompatibleModelOptions {
  /** Resolves the agent's `model.apiKeyEnv` to the key, e.g. `(name) => process.env[name]`. */
  resolveSecret: SecretResolver;
  /** Used when the agent gives no `model.baseUrl`. Default https://api.openai.com/v1. */
  baseUrl?: string;
  /** Deadline of one HTTP request, connect to last byte. Default 60 000. */
  timeoutMs?: number;
  /** Retries inside one model call on 408/429/5xx, timeouts and network errors. Default 3. */
  maxRetries?: number;
  /** First backoff, doubling per retry. Default 500. */
  retryBaseDelayMs?: number;
  /** Cap on any single wait between retries, Retry-After included. Default 30 000. */
  maxRetryDelayMs?: number;
  /** undici dispatcher (proxy, custom TLS, a MockAgent). Default: an Agent owned by this instance. */
  dispatcher?: Dispatcher;
  /** Replaces undici's fetch (tests). */
  fetch?: FetchLike;
  /** Jitter source, [0, 1). Default Math.random. */
  random?: () => number;
}

/**
 * A ModelProvider for the OpenAI Chat Completions API with tool calling, as served by OpenAI, vLLM,
 * Ollama, LM Studio and llama.cpp server. One instance serves every agent with `provider: openai`; each
 * agent names its model, its parameters, its key variable and (optionally) its base URL.
 *
 * Never throws for a failed call: every failure is an error outcome, `retryable` when a new attempt may
 * help (the decider then commands one). Within one call, 408/429/5xx, timeouts and network errors are
 * retried with exponential backoff and jitter, honouring Retry-After. Nothing is logged; error messages
 * carry the provider's message with the API key redacted, never prompt content.
 */
export class OpenAiCompatibleModel implements ModelProvider {
  readonly name = 'openai';
  private readonly resolveSecret: SecretResolver;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly policy: { maxRetries: number; baseDelayMs: number; maxDelayMs: number };
  private readonly fetch: FetchLike;
  private readonly dispatcher: Dispatcher | undefined;
  private readonly ownedAgent: Agent | undefined;
  private readonly random: () => number;

  constructor(options: OpenAiCompatibleModelOptions) {
    this.resolveSecret = options.resolveSecret;
    this.baseUrl = options.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
    this.timeoutMs = positive(options.timeoutMs, 60_000);
    this.policy = {
      maxRetries: Math.max(0, Math.trunc(options.maxRetries ?? 3)),
      baseDelayMs: positive(options.retryBaseDelayMs, 500),
      maxDelayMs: positive(options.maxRetryDelayMs, 30_000),
    };
    this.fetch = options.fetch ?? undiciFetch;
    this.random = options.random ?? Math.random;
    if (options.dispatcher) {
      this.dispatcher = options.dispatcher;
    } else if (!options.fetch) {
      // Our own deadline (timeoutMs) fires first; these are only a backstop against a stuck socket.
      this.ownedAgent = new Agent({ headersTimeout: this.timeoutMs + 5_000, bodyTimeout: this.timeoutMs + 5_000 });
      this.dispatcher = this.ownedAgent;
    }
  }

  async complete(request: ModelRequest): Promise<ModelOutcome> {
    const spec = request.agent.model;
    if (spec.provider !== 'openai') return failure('provider_mismatch', `agent uses ${spec.provider}`, false);
    const apiKey = this.resolveSecret(spec.apiKeyEnv);
    if (!apiKey) {
      return failure('missing_api_key', `no API key: the secret variable ${spec.apiKeyEnv} is not set`, false);
    }
    const tools = buildToolNameTable(request.tools);
    if ('error' in tools) return { status: 'error', error: tools.error };

    const url = `${(spec.baseUrl ?? this.baseUrl).replace(/\/+$/, '')}/chat/completions`;
    const wire = buildRequestBody(spec.name, spec.parameters, request.messages, request.tools);
    // Streamed when someone listens (tokens go to clients live) and the agent does not say otherwise.
    const stream = request.onDelta && spec.stream !== false ? { tools, onDelta: request.onDelta } : undefined;
    if (stream) Object.assign(wire, { stream: true, stream_options: { include_usage: true } });
    const body = JSON.stringify(wire);
    const signal = request.signal;

    for (let retry = 0; ; retry++) {
      if (signal?.aborted) return abortedOutcome();
      const exchange = await this.exchange(url, apiKey, body, signal, stream);
      if (exchange === 'aborted') return abortedOutcome();
      if (exchange.kind === 'response' && exchange.status >= 200 && exchange.status <= 299) {
        return parseCompletion(exchange.text, { tools, step: request.step, fallbackModel: spec.name });
      }
      const failed = classifyFailure(exchange);
      if (!failed.retryable || retry >= this.policy.maxRetries) {
        const requests = retry + 1;
        const message = failed.retryable
          ? `${failed.message} (gave up after ${requests} request${requests === 1 ? '' : 's'})`
          : failed.message;
        return failure(failed.code, redact(message, apiKey), failed.retryable, failed.retryAfterMs);
      }
      const wait = retryDelayMs(retry, failed.retryAfterMs, this.policy, this.random);
      if (!(await sleep(wait, signal))) return abortedOutcome();
    }
  }

  /** Closes the connection pool this instance created (not an injected dispatcher). */
  async close(): Promise<void> {
    await this.ownedAgent?.close();
  }

  /** One HTTP request under its own deadline; never throws. A streamed answer is read as it arrives. */
  private async exchange(
    url: string,
    apiKey: string,
    body: string,
    signal: AbortSignal | undefined,
    stream?: { tools: ToolNameTable; onDelta: NonNullable<ModelRequest['onDelta']> },
  ): Promise<Exchange | 'aborted'> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
        },
        body,
        signal: controller.signal,
        // A redirected POST would be replayed as a GET, possibly to another host: report it instead.
        redirect: 'manual',
        ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
      });
      const ok = response.status >= 200 && response.status <= 299;
      const streamed = stream && ok && response.body && /event-stream/.test(response.headers.get('content-type') ?? '');
      // A server that answers a streamed request with plain JSON is read as plain JSON.
      const text = streamed
        ? await readChatStream(response.body!, stream.tools, stream.onDelta)
        : await response.text();
      const retryAfterMs = parseRetryAfter((name) => response.headers.get(name));
      return { kind: 'response', status: response.status, text, retryAfterMs };
    } catch (err) {
      if (signal?.aborted) return 'aborted';
      if (timedOut || isTimeoutError(err)) return { kind: 'timeout' };
      return { kind: 'network', detail: describeNetworkError(err) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

const MAX_MESSAGE = 4000; // Failure.message

function failure(code: string, message: string, retryable: boolean, retryAfterMs?: number): ModelOutcome {
  const error: Failure = {
    code,
    message: message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE) : message,
    retryable,
    // What the provider asked: the decider waits at least this long before the next attempt.
    ...(retryable && retryAfterMs !== undefined ? { retryAfterMs: Math.round(retryAfterMs) } : {}),
  };
  return { status: 'error', error };
}

/**
 * The caller gave up (the run was cancelled, the worker is shutting down). That says nothing about the
 * model, so it is retryable: if this outcome is recorded at all, a new attempt is the right next step, and
 * a cancelled run ignores it anyway.
 */
function abortedOutcome(): ModelOutcome {
  return failure('aborted', 'the model call was aborted by the caller', true);
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function isTimeoutError(err: unknown): boolean {
  return UNDICI_TIMEOUTS.has(codeOf(causeOf(err)) ?? '');
}

/** undici reports `fetch failed` with the reason in `cause` (an AggregateError with an empty message, sometimes). */
function describeNetworkError(err: unknown): string {
  const cause = causeOf(err);
  const code = codeOf(cause);
  const message = cause instanceof Error ? cause.message : String(cause);
  if (code && message && !message.includes(code)) return `${code}: ${message}`;
  return message || code || 'unknown error';
}

function causeOf(err: unknown): unknown {
  return err instanceof Error && err.cause !== undefined ? err.cause : err;
}

function codeOf(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}
