import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible chat-completions server on loopback that behaves like a real provider where it
 * matters to a harness: it takes its time (latency with jitter), rate-limits with 429 and Retry-After,
 * sometimes answers garbage, notices when a client gives up on a request, and counts everything per
 * conversation so a test can assert how often, and how many at once, the model was called.
 *
 * What it does is written in the latest user message (one run's input: a thread's later runs have their
 * own), as bracketed directives; calls are counted per latest user message too:
 *
 *   [latency=5000] [jitter=2000]   answer after 5 s, ± up to 2 s (per call, deterministic per call number)
 *   [rate_limit=3] [retry_after=1] the first 3 calls answer 429 with `Retry-After: 1`
 *   [garbage=1]                    the first call answers 200 with a body that is not JSON
 *   [call=demo.effect.charge] [item=apple] [parallel=2] [rounds=2]
 *                                  answer the user with (2 parallel) calls of that tool, args {item}, for
 *                                  2 rounds (each after the previous round's results), then a final answer
 *   [slow_after_tools=ms]          latency of the answer that follows tool results (default: latency)
 *   [token_ms=100]                 a streamed request (`stream: true`) gets its answer word by word, this
 *                                  long apart (tool-call arguments in pieces too); without it, in one piece
 *   [answer=words_of_text]         the final answer's text (`_` for spaces) instead of echo/done
 *   [usage=5000]                   report this many prompt tokens
 *
 * After tool results it answers `done: <the tool results>`; without `call` it answers `echo: <input>`.
 */
export interface ConversationStats {
  /** Requests received (each attempt the harness made). */
  calls: number;
  /** Requests answered (any status). */
  answered: number;
  /** Requests the client gave up on before the answer (aborted, timed out, its process died). */
  aborted: number;
  inFlight: number;
  /** The most requests of this conversation at once. */
  maxInFlight: number;
  /** When each request arrived (ms since the server started). */
  arrivals: number[];
  /** How long each answered request took, ms (arrival to answer). */
  durations: number[];
  /** Streamed answers: when (epoch ms) the first piece of text or of a tool call was written, per request. */
  firstTokens: number[];
  /** The request bodies, oldest first (the last 50). */
  bodies: unknown[];
}

interface Directives {
  latency: number;
  jitter: number;
  rateLimit: number;
  retryAfter: number | undefined;
  garbage: number;
  call: string | undefined;
  item: string;
  parallel: number;
  rounds: number;
  afterTools: number | undefined;
  tokenMs: number;
  answer: string | undefined;
  usage: number | undefined;
}

const DIRECTIVE = /\[([a-z_]+)=([^\]\s]*)\]/g;

export class FakeModelServer {
  private server: Server | undefined;
  private readonly stats = new Map<string, ConversationStats>();
  private readonly started = Date.now();
  private readonly allArrivals: number[] = [];
  private total = 0;
  private totalInFlight = 0;
  private maxTotalInFlight = 0;

  /** Starts on `port` (0: any free one) and resolves with the base URL to give an agent (`…/v1`). */
  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    this.server.maxHeadersCount = 0;
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return this.url;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('the fake model server is not listening');
    return `http://127.0.0.1:${address.port}/v1`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** What happened to the conversation whose latest user message contains `marker`. */
  of(marker: string): ConversationStats {
    const found = [...this.stats.entries()].filter(([key]) => key.includes(marker));
    if (found.length > 1) throw new Error(`${found.length} conversations contain "${marker}"`);
    return found[0]?.[1] ?? emptyStats();
  }

  /** When every request arrived, whatever its conversation (epoch ms, in arrival order): what a provider's rate limit counts. */
  arrivals(): readonly number[] {
    return this.allArrivals;
  }

  /** The most requests that arrived within any `windowMs` (a sliding window, as a provider counts them). */
  maxInWindow(windowMs: number): number {
    let most = 0;
    for (let i = 0, j = 0; i < this.allArrivals.length; i++) {
      while (this.allArrivals[i]! - this.allArrivals[j]! >= windowMs) j++;
      most = Math.max(most, i - j + 1);
    }
    return most;
  }

  /** Every conversation's stats, by its latest user message. */
  all(): ReadonlyMap<string, ConversationStats> {
    return this.stats;
  }

  /** Totals over every conversation. */
  totals(): { calls: number; inFlight: number; maxInFlight: number; conversations: number } {
    return {
      calls: this.total,
      inFlight: this.totalInFlight,
      maxInFlight: this.maxTotalInFlight,
      conversations: this.stats.size,
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/_stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Counts only (no request bodies): a benchmark's thousands of conversations stay a small answer.
      const conversations = Object.fromEntries(
        [...this.stats].map(([key, { bodies: _bodies, arrivals: _arrivals, ...counts }]) => [key, counts]),
      );
      res.end(JSON.stringify({ totals: this.totals(), conversations }));
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } }),
      );
      return;
    }
    const body = JSON.parse(await readBody(req)) as {
      messages?: WireMessage[];
      tools?: WireTool[];
      model?: string;
      stream?: boolean;
    };
    const messages = body.messages ?? [];
    const lastUser = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const key = typeof lastUser === 'string' ? lastUser : JSON.stringify(lastUser);
    const d = directivesOf(key);
    const s = this.statsOf(key);
    const n = ++s.calls;
    this.total++;
    s.arrivals.push(Date.now() - this.started);
    this.allArrivals.push(Date.now());
    s.bodies.push(body);
    if (s.bodies.length > 50) s.bodies.shift();
    s.inFlight++;
    s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
    this.totalInFlight++;
    this.maxTotalInFlight = Math.max(this.maxTotalInFlight, this.totalInFlight);
    let done = false;
    const arrived = Date.now();
    const finish = (aborted: boolean) => {
      if (done) return;
      done = true;
      s.inFlight--;
      this.totalInFlight--;
      if (aborted) s.aborted++;
      else {
        s.answered++;
        s.durations.push(Date.now() - arrived);
      }
    };
    res.on('close', () => finish(!res.writableFinished));
    const last = messages[messages.length - 1];
    const afterTools = last?.role === 'tool';
    // Rounds of tool calls this run has had: assistant messages with tool calls since its user message.
    const since = messages.slice(messages.map((m) => m.role).lastIndexOf('user'));
    const rounds = since.filter(
      (m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0,
    ).length;
    const base = afterTools && d.afterTools !== undefined ? d.afterTools : d.latency;
    // Deterministic jitter per call number: the same test sees the same timings.
    const wait = base + (d.jitter > 0 ? Math.round((((n * 7919) % 1000) / 1000 - 0.5) * 2 * d.jitter) : 0);
    if (wait > 0) await sleep(Math.max(0, wait));
    if (done) return;
    if (n <= d.rateLimit) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (d.retryAfter !== undefined) headers['retry-after'] = String(d.retryAfter);
      res.writeHead(429, headers);
      res.end(
        JSON.stringify({
          error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
        }),
      );
      return;
    }
    if (n <= d.rateLimit + d.garbage) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('<html><body>502 Bad Gateway</body></html>');
      return;
    }
    const message: Record<string, unknown> =
      !d.call || rounds >= d.rounds
        ? d.answer !== undefined
          ? { role: 'assistant', content: d.answer }
          : textAnswer(messages, afterTools)
        : toolAnswer(d, body.tools ?? [], n);
    const promptTokens = d.usage ?? Math.ceil(JSON.stringify(messages).length / 4);
    const usage = { prompt_tokens: promptTokens, completion_tokens: 8, total_tokens: promptTokens + 8 };
    if (body.stream) {
      await this.streamAnswer(
        res,
        message,
        body.model ?? 'fake',
        n,
        usage,
        d.tokenMs,
        () => done,
        (at) => s.firstTokens.push(at),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model ?? 'fake',
        choices: [{ index: 0, message, finish_reason: message['tool_calls'] ? 'tool_calls' : 'stop' }],
        usage,
      }),
    );
  }

  /** A streamed answer as OpenAI sends it: `data:` chunks of deltas, usage last, then `[DONE]`. */
  private async streamAnswer(
    res: ServerResponse,
    message: Record<string, unknown>,
    model: string,
    n: number,
    usage: Record<string, number>,
    tokenMs: number,
    gone: () => boolean,
    firstToken: (at: number) => void,
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const frame = (body: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion.chunk', model, ...body })}\n\n`;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      frame({ choices: [{ index: 0, delta, finish_reason: finish }] });
    const pieces: string[] = [chunk({ role: 'assistant' })];
    const text = typeof message['content'] === 'string' ? message['content'] : '';
    for (const word of text.match(/\S+\s*|\s+/g) ?? []) pieces.push(chunk({ content: word }));
    const calls = (message['tool_calls'] ?? []) as Array<{ id: string; function: { name: string; arguments: string } }>;
    calls.forEach((c, index) => {
      pieces.push(
        chunk({
          tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }],
        }),
      );
      const args = c.function.arguments;
      for (let i = 0; i < args.length; i += 8)
        pieces.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 8) } }] }));
    });
    pieces.push(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'));
    pieces.push(frame({ choices: [], usage }));
    pieces.push('data: [DONE]\n\n');
    for (const [i, piece] of pieces.entries()) {
      if (gone()) return;
      res.write(piece);
      if (i === 1) firstToken(Date.now());
      if (tokenMs > 0) await sleep(tokenMs);
    }
    res.end();
  }

  private statsOf(key: string): ConversationStats {
    let s = this.stats.get(key);
    if (!s) this.stats.set(key, (s = emptyStats()));
    return s;
  }
}

interface WireMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: unknown[];
}
interface WireTool {
  function?: { name?: string };
}

function emptyStats(): ConversationStats {
  return {
    calls: 0,
    answered: 0,
    aborted: 0,
    inFlight: 0,
    maxInFlight: 0,
    arrivals: [],
    durations: [],
    firstTokens: [],
    bodies: [],
  };
}

function directivesOf(text: string): Directives {
  const found = new Map<string, string>();
  for (const m of text.matchAll(DIRECTIVE)) found.set(m[1]!, m[2]!);
  const num = (name: string, fallback: number) => {
    const v = found.get(name);
    return v === undefined || Number.isNaN(Number(v)) ? fallback : Number(v);
  };
  return {
    latency: num('latency', 0),
    jitter: num('jitter', 0),
    rateLimit: num('rate_limit', 0),
    retryAfter: found.has('retry_after') ? num('retry_after', 1) : undefined,
    garbage: num('garbage', 0),
    call: found.get('call'),
    item: found.get('item') ?? 'item',
    parallel: Math.max(1, num('parallel', 1)),
    rounds: Math.max(1, num('rounds', 1)),
    afterTools: found.has('slow_after_tools') ? num('slow_after_tools', 0) : undefined,
    tokenMs: num('token_ms', 0),
    answer: found.get('answer')?.replaceAll('_', ' '),
    usage: found.has('usage') ? num('usage', 0) : undefined,
  };
}

function textAnswer(messages: WireMessage[], afterTools: boolean): Record<string, unknown> {
  if (afterTools) {
    const results = messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    return { role: 'assistant', content: `done: ${results.join(' | ')}` };
  }
  const user = messages.filter((m) => m.role === 'user').at(-1)?.content;
  return { role: 'assistant', content: `echo: ${typeof user === 'string' ? user : JSON.stringify(user)}` };
}

function toolAnswer(d: Directives, tools: WireTool[], n: number): Record<string, unknown> {
  const wire = d.call!.replaceAll('.', '__');
  const name = tools.find((t) => t.function?.name === wire)?.function?.name;
  if (!name) return { role: 'assistant', content: `no tool ${d.call} was offered` };
  return {
    role: 'assistant',
    content: null,
    tool_calls: Array.from({ length: d.parallel }, (_, i) => ({
      id: `call_${n}_${i + 1}`,
      type: 'function',
      function: { name, arguments: JSON.stringify({ item: d.parallel > 1 ? `${d.item}-${i + 1}` : d.item }) },
    })),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
