import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { AgentDefinition, type ChatMessage, type ToolSpec } from '@ratchet/contracts';
import type { ModelOutcome, ModelRequest } from '@ratchet/domain';
import { OpenAiCompatibleModel, type OpenAiCompatibleModelOptions } from './openai.model';

/**
 * The OpenAI-compatible model against a fake Chat Completions server on 127.0.0.1 (random port). The
 * fake records every request with its own arrival time, so waits are asserted from the server's side.
 */

const KEY = 'sk-test-secret-0123456789';
const KEY_ENV = 'RATCHET_TEST_OPENAI_KEY';

interface Seen {
  at: number;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}
type Handler = (res: ServerResponse, request: Seen, index: number) => void;

class FakeOpenAi {
  readonly seen: Seen[] = [];
  /** When the server finished sending each response (performance.now()). */
  readonly answeredAt: number[] = [];
  handler: Handler = (res) => json(res, 200, textCompletion('hi'));
  private server: Server | undefined;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const at = performance.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown = raw;
        try {
          body = JSON.parse(raw);
        } catch {
          // keep the raw text
        }
        const seen = { at, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        const index = this.seen.push(seen) - 1;
        res.on('finish', () => (this.answeredAt[index] = performance.now()));
        this.handler(res, seen, index);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}/v1`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function textCompletion(content: string) {
  return {
    id: 'chatcmpl-text',
    object: 'chat.completion',
    model: 'gpt-test-2025',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 },
  };
}

function toolCompletion(calls: { id: string; name: string; arguments: string }[]) {
  return {
    id: 'chatcmpl-tools',
    object: 'chat.completion',
    model: 'gpt-test-2025',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments },
          })),
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 31, completion_tokens: 18, total_tokens: 49 },
  };
}

const weather: ToolSpec = {
  name: 'demo.weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const fake = new FakeOpenAi();
const models: OpenAiCompatibleModel[] = [];

function model(
  options: Partial<OpenAiCompatibleModelOptions> = {},
  secrets: Record<string, string> = { [KEY_ENV]: KEY },
) {
  const m = new OpenAiCompatibleModel({
    resolveSecret: (name) => secrets[name],
    retryBaseDelayMs: 10,
    ...options,
  });
  models.push(m);
  return m;
}

function request(overrides: Partial<ModelRequest> = {}, baseUrl = fake.baseUrl): ModelRequest {
  const agent = AgentDefinition.parse({
    name: 'weather',
    instructions: 'You are helpful.',
    model: {
      provider: 'openai',
      name: 'gpt-test',
      baseUrl,
      apiKeyEnv: KEY_ENV,
      parameters: { temperature: 0, max_tokens: 128 },
    },
    tools: [{ name: 'demo.weather' }],
  });
  return {
    agent,
    step: 1,
    tools: [weather],
    messages: [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'What is the weather in Oslo and Rome?' },
    ],
    ...overrides,
  };
}

function errorOf(outcome: ModelOutcome) {
  if (outcome.status !== 'error') throw new Error(`expected an error outcome, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

beforeAll(() => fake.start());
afterAll(() => fake.stop());
beforeEach(() => {
  fake.seen.length = 0;
  fake.answeredAt.length = 0;
});
afterEach(async () => {
  await Promise.all(models.splice(0).map((m) => m.close()));
});

describe('OpenAiCompatibleModel against a fake Chat Completions server', () => {
  it('sends the mapped request and reads two parallel tool calls', async () => {
    fake.handler = (res) =>
      json(
        res,
        200,
        toolCompletion([
          { id: 'call_oslo', name: 'demo__weather', arguments: '{"city":"Oslo"}' },
          { id: 'call_rome', name: 'demo__weather', arguments: '{"city": "Rome"}' },
        ]),
      );

    const outcome = await model().complete(request());

    expect(outcome).toEqual({
      status: 'ok',
      content: null,
      toolCalls: [
        { id: 'call_oslo', name: 'demo.weather', args: { city: 'Oslo' } },
        { id: 'call_rome', name: 'demo.weather', args: { city: 'Rome' } },
      ],
      usage: { inputTokens: 31, outputTokens: 18 },
      model: 'gpt-test-2025',
    });
    expect(fake.seen).toHaveLength(1);
    const [seen] = fake.seen;
    expect(seen).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
    expect(seen?.headers['authorization']).toBe(`Bearer ${KEY}`);
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.body).toEqual({
      model: 'gpt-test',
      temperature: 0,
      max_tokens: 128,
      stream: false,
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'What is the weather in Oslo and Rome?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'demo__weather',
            description: 'Current weather for a city',
            parameters: weather.parameters,
          },
        },
      ],
    });
  });

  it('sends tool results back by call id and reads the final text', async () => {
    fake.handler = (res) => json(res, 200, textCompletion('Sunny in Oslo, rain in Rome.'));
    const messages: ChatMessage[] = [
      { role: 'user', content: 'What is the weather in Oslo and Rome?' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'call_oslo', name: 'demo.weather', args: { city: 'Oslo' } },
          { id: 'call_rome', name: 'demo.weather', args: { city: 'Rome' } },
        ],
      },
      { role: 'tool', toolCallId: 'call_oslo', name: 'demo.weather', content: '{"forecast":"sunny"}', isError: false },
      { role: 'tool', toolCallId: 'call_rome', name: 'demo.weather', content: '{"forecast":"rain"}', isError: false },
    ];

    const outcome = await model().complete(request({ messages, step: 2 }));

    expect(outcome).toEqual({
      status: 'ok',
      content: 'Sunny in Oslo, rain in Rome.',
      toolCalls: [],
      usage: { inputTokens: 40, outputTokens: 7 },
      model: 'gpt-test-2025',
    });
    expect((fake.seen[0]?.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'What is the weather in Oslo and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_oslo', type: 'function', function: { name: 'demo__weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_rome', type: 'function', function: { name: 'demo__weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_oslo', content: '{"forecast":"sunny"}' },
      { role: 'tool', tool_call_id: 'call_rome', content: '{"forecast":"rain"}' },
    ]);
  });

  it('waits out a 429 with Retry-After, then succeeds', async () => {
    fake.handler = (res, _req, i) =>
      i === 0
        ? json(res, 429, { error: { message: 'Rate limit reached', type: 'requests' } }, { 'retry-after': '1' })
        : json(res, 200, textCompletion('after the wait'));

    const outcome = await model().complete(request());

    expect(outcome).toMatchObject({ status: 'ok', content: 'after the wait' });
    expect(fake.seen).toHaveLength(2);
    // Measured by the server: from the moment the 429 was sent to the arrival of the retry.
    const waited = (fake.seen[1]?.at ?? 0) - (fake.answeredAt[0] ?? Infinity);
    expect(waited).toBeGreaterThanOrEqual(1_000);
  });

  it('gives up after repeated 500s with a retryable server_error that counts the requests', async () => {
    fake.handler = (res) => json(res, 500, { error: { message: 'The server had an error', type: 'server_error' } });

    const error = errorOf(await model({ maxRetries: 2 }).complete(request()));

    expect(fake.seen).toHaveLength(3);
    expect(error).toEqual({
      code: 'server_error',
      message: 'HTTP 500 from the provider: The server had an error (gave up after 3 requests)',
      retryable: true,
    });
  });

  it('does not retry a 401; the message carries the provider message but never the key', async () => {
    fake.handler = (res) =>
      json(res, 401, {
        error: {
          message: `Incorrect API key provided: ${KEY}.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });

    const error = errorOf(await model().complete(request()));

    expect(fake.seen).toHaveLength(1);
    expect(error.code).toBe('unauthorized');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('Incorrect API key provided');
    expect(error.message).not.toContain(KEY);
    expect(JSON.stringify(error)).not.toContain('Oslo'); // nor prompt content
  });

  it('does not retry a 400 and passes the provider message on', async () => {
    fake.handler = (res) =>
      json(res, 400, { object: 'error', message: "This model's maximum context length is 4096 tokens" });

    const error = errorOf(await model().complete(request()));

    expect(fake.seen).toHaveLength(1);
    expect(error).toMatchObject({ code: 'bad_request', retryable: false });
    expect(error.message).toContain('maximum context length is 4096 tokens');
  });

  it('reports a response slower than timeoutMs as a retryable timeout, after retrying it', async () => {
    fake.handler = (res) => {
      const timer = setTimeout(() => json(res, 200, textCompletion('too late')), 5_000);
      res.on('close', () => clearTimeout(timer));
    };

    const error = errorOf(await model({ timeoutMs: 200, maxRetries: 1 }).complete(request()));

    expect(error).toMatchObject({ code: 'timeout', retryable: true });
    expect(error.message).toContain('gave up after 2 requests');
    expect(fake.seen).toHaveLength(2);
  });

  it('reports a body that is not JSON as malformed_response', async () => {
    fake.handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Bad gateway</body></html>');
    };

    const error = errorOf(await model().complete(request()));

    expect(error).toEqual({ code: 'malformed_response', message: 'the response body is not JSON', retryable: true });
    expect(fake.seen).toHaveLength(1); // a new attempt is the decider's call, not a retry inside this one
  });

  it('reports tool-call arguments that are not valid JSON as malformed_response', async () => {
    fake.handler = (res) =>
      json(res, 200, toolCompletion([{ id: 'call_bad', name: 'demo__weather', arguments: '{"city": "Os' }]));

    const error = errorOf(await model().complete(request()));

    expect(error).toMatchObject({ code: 'malformed_response', retryable: true });
    expect(error.message).toContain('call_bad');
    expect(error.message).not.toContain('"Os'); // the arguments themselves stay out
  });

  it('reports a call to a tool that was not offered as malformed_response', async () => {
    fake.handler = (res) =>
      json(res, 200, toolCompletion([{ id: 'call_x', name: 'shell__exec', arguments: '{"cmd":"ls"}' }]));

    const error = errorOf(await model().complete(request()));

    expect(error).toMatchObject({ code: 'malformed_response', retryable: true });
    expect(error.message).toContain('"shell__exec", a tool that was not offered');
  });

  it('stops at once when the caller aborts, mid-request or mid-backoff', async () => {
    fake.handler = (res) => {
      const timer = setTimeout(() => json(res, 200, textCompletion('too late')), 5_000);
      res.on('close', () => clearTimeout(timer));
    };
    const midRequest = new AbortController();
    setTimeout(() => midRequest.abort(), 100);
    const first = errorOf(await model().complete(request({ signal: midRequest.signal })));
    expect(first.code).toBe('aborted');
    expect(fake.seen).toHaveLength(1);

    fake.handler = (res) => json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '20' });
    const midBackoff = new AbortController();
    setTimeout(() => midBackoff.abort(), 200);
    const second = errorOf(await model().complete(request({ signal: midBackoff.signal })));
    expect(second.code).toBe('aborted');
    expect(fake.seen).toHaveLength(2); // the 429, and no retry

    const already = new AbortController();
    already.abort();
    expect(errorOf(await model().complete(request({ signal: already.signal }))).code).toBe('aborted');
    expect(fake.seen).toHaveLength(2);
  });

  it('fails without sending anything when the key variable is not set, naming the variable', async () => {
    const error = errorOf(await model({}, {}).complete(request()));

    expect(error).toEqual({
      code: 'missing_api_key',
      message: `no API key: the secret variable ${KEY_ENV} is not set`,
      retryable: false,
    });
    expect(fake.seen).toHaveLength(0);
  });

  it('reports a refused connection as a retryable network error', async () => {
    const closed = new FakeOpenAi();
    await closed.start();
    const deadUrl = closed.baseUrl;
    await closed.stop();

    const error = errorOf(await model({ maxRetries: 1 }).complete(request({}, deadUrl)));

    expect(error).toMatchObject({ code: 'network', retryable: true });
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('gave up after 2 requests');
  });

  it('uses the instance baseUrl when the agent names none', async () => {
    fake.handler = (res) => json(res, 200, textCompletion('from the default'));
    const req = request();
    const { baseUrl: _omitted, ...spec } = req.agent.model as Extract<typeof req.agent.model, { provider: 'openai' }>;
    const outcome = await model({ baseUrl: `${fake.baseUrl}/` }).complete({
      ...req,
      agent: { ...req.agent, model: spec },
    });

    expect(outcome).toMatchObject({ status: 'ok', content: 'from the default' });
    expect(fake.seen[0]?.url).toBe('/v1/chat/completions');
  });
});
