import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RawEvent } from '@ratchet/adapters';
import { RatchetClient, StreamedAnswers, type FollowItem } from '@ratchet/client';
import type { ModelCallCommand, ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { FakeModelServer } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * Answers as they are written (over the gateway's SSE and over NATS with @ratchet/client), long threads
 * whose conversation is larger than the bus takes, bounded context, and per-run budgets — against an
 * OpenAI-compatible server on loopback that streams the way OpenAI does (content and tool-call deltas).
 */

jest.setTimeout(240_000);

const TENANT = 'demo';
const KEY = 'rk_e2e_streaming_budgets_key_1';
const model = new FakeModelServer();
let agents = '';

function writeAgents(baseUrl: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ratchet-streaming-'));
  const agent = (name: string, extra: string) =>
    writeFileSync(
      path.join(dir, `${name}.yaml`),
      `name: ${name}\nmodel:\n  provider: openai\n  name: fake-1\n  baseUrl: ${baseUrl}\n${extra}`,
    );
  agent('writer', 'maxSteps: 3\ntools:\n  - name: demo.weather\n');
  agent('bounded', 'maxSteps: 3\ncontext:\n  maxMessages: 3\n');
  agent('frugal', 'maxSteps: 10\nmodelAttempts: 5\nbudget:\n  modelCalls: 2\ntools:\n  - name: demo.weather\n');
  agent('thrifty', 'maxSteps: 10\nbudget:\n  tokens: 1000\ntools:\n  - name: demo.weather\n');
  agent('hasty', 'maxSteps: 3\nrunTimeoutSeconds: 3\n');
  writeFileSync(
    path.join(dir, 'scribe.yaml'),
    [
      'name: scribe',
      'model:',
      '  provider: scripted',
      '  script:',
      "    - reply: 'noted {{input}}'",
      'maxSteps: 2',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(dir, 'chatty.yaml'),
    [
      'name: chatty',
      'model:',
      '  provider: scripted',
      '  tokenDelayMs: 20',
      '  script:',
      "    - reply: 'Hello! This answer is written word by word, the way a model writes it.'",
      '',
    ].join('\n'),
  );
  return dir;
}

interface Frame {
  event: string;
  id?: number;
  data: Record<string, unknown>;
}

/** Reads SSE frames until `stop` says so. */
async function sse(url: string, stop: (frames: Frame[]) => boolean): Promise<Frame[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 120_000);
  const res = await fetch(url, { headers: { authorization: `Bearer ${KEY}` }, signal: abort.signal });
  expect(res.status).toBe(200);
  const frames: Frame[] = [];
  const reader = res.body!.getReader();
  let buffer = '';
  try {
    while (!stop(frames)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += new TextDecoder().decode(value);
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          raw
            .split('\n')
            .filter((l) => !l.startsWith(':') && l.includes(': '))
            .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
        );
        if (!fields['event'] || !fields['data']) continue;
        frames.push({
          event: fields['event'],
          ...(fields['id'] ? { id: Number(fields['id']) } : {}),
          data: JSON.parse(fields['data']) as Record<string, unknown>,
        });
        if (stop(frames)) break;
      }
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return frames;
}

/** What an SSE client makes of the frames: each step's text, as StreamedAnswers does over NATS. */
function assemble(frames: Frame[]): StreamedAnswers {
  const answers = new StreamedAnswers();
  for (const f of frames) {
    if (f.event === 'token' || f.event === 'reset')
      answers.add({ type: f.event, chunk: f.data as never } as FollowItem);
    else answers.add({ type: 'event', event: f.data as unknown as ThreadEvent });
  }
  return answers;
}

const ANSWER = 'The_weather_in_Oslo_is_light_rain_and_nine_degrees,_with_wind_from_the_west_this_afternoon';

describe('streaming, long threads and budgets', () => {
  let stack: TestStack;
  let base = '';
  const orchestratorEnv = (extra: Record<string, string> = {}) => ({
    AGENTS_DIR: agents,
    OPENAI_API_KEY: 'sk-fake',
    WATCHDOG_INTERVAL_MS: '300',
    WATCHDOG_MIN_IDLE_MS: '500',
    ...extra,
  });

  beforeAll(async () => {
    agents = writeAgents(await model.start());
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator', orchestratorEnv()), stack.start('tool-executor')]);
    const gateway = await stack.start('gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: TENANT });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  afterAll(async () => {
    await stack?.stop();
    await model.stop();
  });

  const startRun = async (key: string, agent: string, input: string, threadId?: string) => {
    const res = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ agent, input, ...(threadId ? { threadId } : {}) }),
    });
    expect(res.status).toBe(202);
    return (await res.json()) as { runId: string; threadId: string };
  };
  const ended = (runId: string) => (frames: Frame[]) =>
    frames.some((f) => f.data['runId'] === runId && ['run.completed', 'run.failed'].includes(f.event));

  it('streams the answer to an SSE client as it is written (tool-call deltas too), then the event of record', async () => {
    const threadId = 'stream-live';
    const follow = sse(`${base}/v1/threads/${threadId}/stream?mode=messages,events`, (f) =>
      f.some((x) => x.event === 'run.completed'),
    );
    // Started once the stream waits for the thread: every token of the run is seen.
    await new Promise((r) => setTimeout(r, 300));
    const run = await startRun(
      'stream-1',
      'writer',
      `stream-1 [token_ms=40] [call=demo.weather] [answer=${ANSWER}]`,
      threadId,
    );
    const frames = await follow;
    const tokens = frames.filter((f) => f.event === 'token');
    // The tool call came in pieces (its arguments streamed), the answer word by word.
    expect(tokens.some((f) => Array.isArray(f.data['toolCalls']))).toBe(true);
    expect(tokens.filter((f) => typeof f.data['text'] === 'string').length).toBeGreaterThan(5);
    const responded = frames.filter((f) => f.event === 'model.responded');
    expect(responded).toHaveLength(2);
    // Tokens of the answer arrived before its event; the assembled text equals the log's.
    const finalEvent = responded[1]!.data as unknown as ThreadEvent & { data: { content: string; step: number } };
    const firstToken = frames.findIndex((f) => f.event === 'token' && f.data['step'] === 2);
    expect(firstToken).toBeGreaterThanOrEqual(0);
    expect(firstToken).toBeLessThan(frames.indexOf(responded[1]!));
    expect(assemble(frames).text(run.runId, 2)).toBe(finalEvent.data.content);
    expect(finalEvent.data.content).toBe(ANSWER.replaceAll('_', ' '));
  });

  it('after a worker dies mid-stream, says so with a reset, then streams the retried text; the text ends as the log holds it', async () => {
    const threadId = 'stream-killed';
    const marker = 'stream-kill';
    const client = new RatchetClient(stack.nc, {
      tenant: TENANT,
      prefix: stack.prefix.subject,
      streamPrefix: stack.prefix.stream,
      // The feed carries the answers sealed (content at rest): opened with the installation's keys.
      openContent: async (event) => (await stack.orchestratorDb.content.openEvents([event as RawEvent], 'erased'))[0],
    });
    const overNats: FollowItem[] = [];
    const runId = runIdFor(TENANT, marker);
    const nats = (async () => {
      for await (const item of client.follow(threadId, { untilRunEnds: runId })) overNats.push(item);
    })();
    const follow = sse(`${base}/v1/threads/${threadId}/stream?mode=messages,events`, ended(runId));
    await new Promise((r) => setTimeout(r, 300));
    await startRun(marker, 'writer', `${marker} [token_ms=250] [answer=${ANSWER}]`, threadId);
    await until(() => overNats.filter((i) => i.type === 'token').length >= 3);
    await stack.services.get('orchestrator')!.kill('SIGKILL');
    await stack.start('orchestrator', orchestratorEnv());
    const frames = await follow;
    await nats;
    const resets = frames.filter((f) => f.event === 'reset');
    expect(resets.map((f) => f.data['attempt'])).toEqual([1, 2]);
    // Tokens of attempt 1 came, then the reset of attempt 2, then the whole answer again.
    const second = frames.indexOf(resets[1]!);
    expect(frames.slice(0, second).some((f) => f.event === 'token' && f.data['attempt'] === 1)).toBe(true);
    const log = await stack.waitFor(TENANT, threadId, terminal(runId));
    const content = (log.find((e) => e.type === 'model.responded')?.data as { content: string }).content;
    expect(assemble(frames).text(runId, 1)).toBe(content);
    expect(
      assemble(
        frames.slice(
          0,
          frames.findIndex((f) => f.event === 'model.responded'),
        ),
      ).text(runId, 1),
    ).toBe(content);
    // The same over NATS with @ratchet/client.
    const answers = new StreamedAnswers();
    overNats.forEach((i) => answers.add(i));
    expect(overNats.some((i) => i.type === 'reset' && i.chunk.attempt === 2)).toBe(true);
    expect(answers.text(runId, 1)).toBe(content);
    expect(model.of(marker).calls).toBe(2);
  });

  it('streams the offline scripted model word by word', async () => {
    const threadId = 'stream-scripted';
    const follow = sse(
      `${base}/v1/threads/${threadId}/stream?mode=messages`,
      (f) => f.filter((x) => x.event === 'token').length >= 3,
    );
    await new Promise((r) => setTimeout(r, 300));
    await startRun('scripted-1', 'chatty', 'Hello there, how are you?', threadId);
    const frames = await follow;
    expect(frames[0]?.event).toBe('reset');
    expect(
      frames
        .filter((f) => f.event === 'token')
        .map((f) => f.data['text'])
        .join(''),
    ).toMatch(/^Hello/);
  });

  it('refuses an unknown stream mode with 400, naming it', async () => {
    const res = await fetch(`${base}/v1/threads/stream-live/stream?mode=messages,everything`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: Array<{ parameter: string; detail: string }> };
    expect(problem.errors).toEqual([
      expect.objectContaining({ parameter: 'mode.1', detail: expect.stringContaining('"messages" or "events"') }),
    ]);
  });

  it.each([
    ['local', {}],
    ['bus', { MODEL_LOCAL_CALLS: '0' }],
  ] as const)(
    'runs a thread whose conversation is several MB on the %s path, the command naming its transcript',
    async (mode, env) => {
      await stack.services.get('orchestrator')!.kill('SIGKILL');
      await stack.start('orchestrator', orchestratorEnv(env));
      const threadId = `long-${mode}`;
      const chunk = `${'lorem ipsum dolor sit amet '.repeat(3_600)}`.slice(0, 99_000);
      const runs = 30;
      for (let i = 0; i < runs; i++) {
        await stack.publishRequest(TENANT, {
          requestId: `${threadId}-${i}`,
          threadId,
          agent: 'scribe',
          input: [{ role: 'user', content: `${i} ${chunk}` }],
          principal: { id: 'alice', roles: ['runner'] },
          concurrency: 'enqueue',
        });
      }
      const events = await stack.waitFor(
        TENANT,
        threadId,
        terminal(runIdFor(TENANT, `${threadId}-${runs - 1}`)),
        180_000,
      );
      expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(runs);
      const sizes = await stack.orchestratorDb.sql.query<{ bytes: number }>(
        `select sum(length(message::text))::int as bytes from ${stack.orchestratorDb.sql.table('thread_messages')} where tenant_id = ? and thread_id = ?`,
        [TENANT, threadId],
      );
      expect(sizes[0]!.bytes).toBeGreaterThan(2_000_000);
      // The last model call named its transcript instead of carrying it.
      const last = await stack.orchestratorDb.sql.query<{ payload: ModelCallCommand }>(
        `select payload from ${stack.orchestratorDb.sql.table('outbox')} where id = ?`,
        [`${runIdFor(TENANT, `${threadId}-${runs - 1}`)}:model:1:1`],
      );
      expect(last[0]?.payload.messages).toBeUndefined();
      expect(last[0]?.payload.transcript?.messages).toBeGreaterThan(runs * 2 - 2);
    },
  );

  it('sends the model only the context the agent bounds, and the log says how much', async () => {
    const threadId = 'bounded-1';
    for (let i = 0; i < 3; i++)
      await stack.publishRequest(TENANT, {
        requestId: `bounded-${i}`,
        threadId,
        agent: 'bounded',
        input: [{ role: 'user', content: `bounded question ${i}` }],
        principal: { id: 'alice', roles: ['runner'] },
        concurrency: 'enqueue',
      });
    const events = await stack.waitFor(TENANT, threadId, terminal(runIdFor(TENANT, 'bounded-2')));
    const last = events.filter((e) => e.type === 'model.responded').at(-1)!;
    expect(last.data).toMatchObject({ context: { sent: 3, of: 5 } });
    const sent = model.of('bounded question 2').bodies.at(-1) as { messages: Array<{ role: string }> };
    expect(sent.messages.filter((m) => m.role !== 'system')).toHaveLength(3);
  });

  it('fails a run past its model-call budget naming it, and a restart mid-call never makes a third call', async () => {
    const marker = 'budget-calls';
    await stack.publishRequest(TENANT, {
      requestId: marker,
      agent: 'frugal',
      input: [{ role: 'user', content: `${marker} [garbage=99] [latency=1500]` }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    await until(() => model.of(marker).calls === 2 && model.of(marker).inFlight === 1);
    // Killed in the second (last allowed) call: its redelivery would be a third call; the budget refuses it.
    await stack.services.get('orchestrator')!.kill('SIGKILL');
    await stack.start('orchestrator', orchestratorEnv());
    const events = await stack.waitFor(TENANT, threadIdFor(TENANT, marker), terminal(runIdFor(TENANT, marker)), 60_000);
    expect(events.find((e) => e.type === 'run.failed')).toMatchObject({
      type: 'run.failed',
      data: {
        budget: 'modelCalls',
        error: { code: 'budget.exceeded', message: expect.stringContaining('model-call budget') },
      },
    });
    expect(model.of(marker).calls).toBe(2);
  });

  it('fails a run past its token budget, and one past its working time (aborting the call in flight)', async () => {
    await stack.publishRequest(TENANT, {
      requestId: 'budget-tokens',
      agent: 'thrifty',
      input: [{ role: 'user', content: 'budget-tokens [usage=5000] [call=demo.weather]' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    await stack.publishRequest(TENANT, {
      requestId: 'budget-wall',
      agent: 'hasty',
      input: [{ role: 'user', content: 'budget-wall [latency=30000]' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const tokens = await stack.waitFor(
      TENANT,
      threadIdFor(TENANT, 'budget-tokens'),
      terminal(runIdFor(TENANT, 'budget-tokens')),
    );
    expect(tokens.at(-1)).toMatchObject({ type: 'run.failed', data: { budget: 'tokens' } });
    expect(tokens.filter((e) => e.type === 'tool.failed')).toHaveLength(1);
    const wall = await stack.waitFor(
      TENANT,
      threadIdFor(TENANT, 'budget-wall'),
      terminal(runIdFor(TENANT, 'budget-wall')),
      60_000,
    );
    expect(wall.find((e) => e.type === 'run.failed')).toMatchObject({
      data: {
        budget: 'workingTime',
        error: { code: 'budget.exceeded', message: expect.stringContaining('the run has worked') },
      },
    });
    await until(() => model.of('budget-wall').aborted === 1, 15_000);
  });
});

async function until(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
