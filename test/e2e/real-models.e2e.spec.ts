import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openServiceDatabase, threadEffects, type Database } from '@ratchet/adapters';
import type { CancelRunMessage, RunOutcome, ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { EffectService, FakeModelServer } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * Runs on a real model's terms, over HTTP against an OpenAI-compatible server on loopback that takes
 * seconds to answer, rate-limits, and counts every call per conversation (how many, how many at once,
 * how many the harness gave up on). Every claim holds on both paths a model call can take: run by the
 * orchestrator that committed it (the default) and through the bus to a model worker (MODEL_LOCAL_CALLS=0).
 */

jest.setTimeout(240_000);

const TENANT = 'acme';
const model = new FakeModelServer();
const effects = new EffectService();
let agentsDir = '';

/** The agents, pointed at the fake server (its port is known only once it runs). */
function writeAgents(baseUrl: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ratchet-real-models-'));
  const agent = (name: string, extra: string) =>
    writeFileSync(
      path.join(dir, `${name}.yaml`),
      `name: ${name}\nmodel:\n  provider: openai\n  name: fake-1\n  baseUrl: ${baseUrl}\n${extra}`,
    );
  // A step budget far below the model's latency: every attempt times out.
  agent('slowpoke', 'stepTimeoutSeconds: 2\nmodelAttempts: 3\nmaxSteps: 3\n');
  // Calls of 5–20 s, a tool in between: each run is two model calls, each well inside its budget.
  agent('steady', 'stepTimeoutSeconds: 60\nmaxSteps: 3\ntools:\n  - name: demo.effect.read\n');
  // Waits out the provider's 429s for 3 s at most in all.
  agent('impatient', 'stepTimeoutSeconds: 60\nmaxSteps: 3\nbudget:\n  rateLimitWaitSeconds: 3\n');
  // Slow tools with effects, for cancellation.
  agent(
    'charger',
    'stepTimeoutSeconds: 60\nmaxSteps: 3\ntools:\n  - name: demo.effect.charge\n  - name: demo.effect.upsert\n',
  );
  return dir;
}

const types = (events: ThreadEvent[]) => events.map((e) => e.type);
const ask = (requestId: string, agent: string, content: string, extra: Record<string, unknown> = {}) => ({
  requestId,
  agent,
  input: [{ role: 'user' as const, content }],
  principal: { id: 'alice', roles: ['runner'] },
  ...extra,
});

beforeAll(async () => {
  agentsDir = writeAgents(await model.start());
  await effects.start();
});
afterAll(async () => {
  await model.stop();
  await effects.stop();
});

/** One stack per model path: local calls (the default) and the bus (MODEL_LOCAL_CALLS=0). */
const PATHS = [
  { path: 'local', env: {} },
  { path: 'bus', env: { MODEL_LOCAL_CALLS: '0' } },
] as const;

describe.each(PATHS)('a model slower than the step budget, rate limits, many runs ($path path)', ({ path: p, env }) => {
  let stack: TestStack;
  const orchestratorEnv = () => ({
    AGENTS_DIR: agentsDir,
    OPENAI_API_KEY: 'sk-fake',
    // An eager watchdog: were a live call ever taken for a stalled one, it would be re-issued at once.
    WATCHDOG_INTERVAL_MS: '300',
    WATCHDOG_MIN_IDLE_MS: '500',
    ...env,
  });

  beforeAll(async () => {
    stack = await TestStack.create();
    await stack.start('orchestrator', orchestratorEnv());
    await stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: effects.url, TOOL_CONCURRENCY: '16' });
  });
  afterAll(() => stack?.stop());

  const run = async (requestId: string, agent: string, content: string): Promise<ThreadEvent[]> => {
    await stack.publishRequest(TENANT, ask(requestId, agent, content));
    return stack.waitFor(TENANT, threadIdFor(TENANT, requestId), terminal(runIdFor(TENANT, requestId)), 120_000);
  };

  it('calls a model slower than its step budget a bounded number of times, never two at once, and fails naming why', async () => {
    const marker = `slowpoke-${p}`;
    const events = await run(marker, 'slowpoke', `${marker} [latency=15000]`);
    const calls = model.of(marker);
    expect(calls.calls).toBe(3);
    expect(calls.maxInFlight).toBe(1);
    // Each attempt was aborted at its deadline before the next one started.
    expect(calls.aborted).toBe(3);
    expect(
      events.filter((e) => e.type === 'model.requested').map((e) => (e.data as { attempt: number }).attempt),
    ).toEqual([1, 2, 3]);
    const failed = events.at(-1);
    expect(failed?.type).toBe('run.failed');
    expect(failed?.data).toMatchObject({
      error: {
        code: 'model.timeout',
        message: expect.stringMatching(
          /^step 1: the model call failed 3 times \(the limit is 3 attempts\); last error: no answer within 2 s/,
        ),
      },
    });
  });

  it('waits out a 429 storm many times longer than the attempts, as the provider asks, and fails past the wait budget', async () => {
    const storm = `storm-${p}`;
    const clears = `clears-${p}`;
    const endless = `endless-${p}`;
    // Six 429s asking for 2 s each: three times what three attempts used to wait before the run failed.
    const [stormed, cleared, gaveUp] = await Promise.all([
      run(storm, 'steady', `${storm} [rate_limit=6] [retry_after=2]`),
      run(clears, 'steady', `${clears} [rate_limit=2] [retry_after=1]`),
      run(endless, 'impatient', `${endless} [rate_limit=99] [retry_after=1]`),
    ]);
    expect(stormed.at(-1)?.type).toBe('run.completed');
    expect(model.of(storm).calls).toBe(7);
    const gaps = model
      .of(storm)
      .arrivals.slice(1)
      .map((t, i) => t - model.of(storm).arrivals[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(2000);
    // Each wait is the same attempt, named as the provider's 429: none is an attempt.
    const asked = stormed.filter((e) => e.type === 'model.requested').map((e) => e.data as Record<string, unknown>);
    expect(asked.filter((r) => r['step'] === 1).map((r) => [r['attempt'], r['waitFor']])).toEqual([
      [1, undefined],
      ...Array.from({ length: 6 }, () => [1, { limit: 'provider', bound: 'rate_limited' }]),
    ]);
    expect(cleared.at(-1)?.type).toBe('run.completed');
    expect(model.of(clears).calls).toBe(3);
    // A storm past the agent's rate-limit wait budget (3 s) fails naming it, after the waits it had room for.
    expect(gaveUp.at(-1)).toMatchObject({
      type: 'run.failed',
      data: {
        error: {
          code: 'model.rate_limited',
          message: expect.stringContaining('rate-limit wait budget of 3 s'),
        },
      },
    });
    expect(model.of(endless).calls).toBeGreaterThanOrEqual(2);
    expect(model.of(endless).calls).toBeLessThanOrEqual(4);
  });

  it('makes exactly one call per step for 50 concurrent runs whose calls take 5–20 s', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `steady-${p}-${i}`);
    await Promise.all(
      ids.map((id) =>
        stack.publishRequest(
          TENANT,
          ask(id, 'steady', `${id} [latency=12500] [jitter=7500] [call=demo.effect.read] [item=${id}]`),
        ),
      ),
    );
    for (const id of ids) {
      const events = await stack.waitFor(TENANT, threadIdFor(TENANT, id), terminal(runIdFor(TENANT, id)), 120_000);
      expect(events.at(-1)?.type).toBe('run.completed');
      // Two steps, one attempt each: the watchdog never took a live call for a stalled one.
      expect(events.filter((e) => e.type === 'model.requested')).toHaveLength(2);
      expect(events.filter((e) => e.type === 'run.resumed')).toHaveLength(0);
      const calls = model.of(`${id} `);
      expect([calls.calls, calls.maxInFlight, calls.aborted]).toEqual([2, 1, 0]);
    }
  });

  it('gives a call whose worker was SIGKILLed mid-call exactly one more attempt', async () => {
    const marker = `killed-${p}`;
    await stack.publishRequest(TENANT, ask(marker, 'steady', `${marker} [latency=5000]`));
    await until(() => model.of(marker).inFlight === 1);
    await stack.services.get('orchestrator')!.kill('SIGKILL');
    await stack.start('orchestrator', orchestratorEnv());
    const events = await stack.waitFor(TENANT, threadIdFor(TENANT, marker), terminal(runIdFor(TENANT, marker)), 90_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    const calls = model.of(marker);
    expect([calls.calls, calls.aborted, calls.maxInFlight]).toEqual([2, 1, 1]);
    const attempts = events.filter((e) => e.type === 'model.requested');
    expect(attempts.map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);
    expect((attempts[1]?.data as { retryReason?: string }).retryReason).toMatch(/stopped before answering/);
  });

  it('aborts the model call of a cancelled run at once, and records its answer as ignored', async () => {
    const marker = `cancel-model-${p}`;
    const threadId = threadIdFor(TENANT, marker);
    const runId = runIdFor(TENANT, marker);
    await stack.publishRequest(TENANT, ask(marker, 'steady', `${marker} [latency=30000]`));
    await until(() => model.of(marker).inFlight === 1);
    await cancel(stack, threadId, runId);
    await until(() => model.of(marker).aborted === 1, 10_000);
    const events = await stack.waitFor(TENANT, threadId, (ev) => ev.some((e) => e.type === 'result.ignored'), 30_000);
    expect(types(events).slice(-2)).toEqual(['run.cancelled', 'result.ignored']);
    expect(events.at(-1)?.data).toMatchObject({ kind: 'model.result', outcome: 'error:aborted' });
    expect(model.of(marker).calls).toBe(1);
  });
});

describe.each(PATHS)('cancelling and interrupting runs whose tools act ($path path)', ({ path: p, env }) => {
  let stack: TestStack;
  let tools: Database;

  beforeAll(async () => {
    stack = await TestStack.create();
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
    await stack.start('orchestrator', { AGENTS_DIR: agentsDir, OPENAI_API_KEY: 'sk-fake', ...env });
    // One call at a time: of two parallel calls one acts while the other waits in the queue.
    await stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: effects.url, TOOL_CONCURRENCY: '1' });
  });
  afterAll(async () => {
    await tools?.close();
    await stack?.stop();
  });

  /**
   * A run whose model asks for two slow calls of `tool` at once; stopped (by `how`) while the first acts
   * and the second is queued. Then the thread, the ledger and the far side must agree: the acting call's
   * effect happened once and its real outcome follows the run's end; the queued one never ran.
   */
  async function stopWhileActing(tool: 'charge' | 'upsert', how: 'cancel' | 'interrupt', marker: string) {
    const threadId = threadIdFor(TENANT, marker);
    const runId = runIdFor(TENANT, marker);
    await stack.publishRequest(
      TENANT,
      ask(marker, 'charger', `${marker} [call=demo.effect.${tool}] [item=wait3000-${marker}] [parallel=2]`),
    );
    const acting = `${runId}:1:call_1_1`;
    const queued = `${runId}:1:call_1_2`;
    await until(() => effects.acting.get(`${TENANT}:${threadId}:${acting}`) === 1);
    if (how === 'cancel') await cancel(stack, threadId, runId);
    else
      await stack.publishRequest(
        TENANT,
        ask(`${marker}-next`, 'charger', `${marker}-next plain`, { threadId, concurrency: 'interrupt' }),
      );
    const events = await stack.waitFor(
      TENANT,
      threadId,
      (ev) => {
        const stopped = ev.findIndex((e) => e.type === 'run.cancelled' && e.runId === runId);
        const after = ev.slice(stopped + 1).filter((e) => e.runId === runId);
        return (
          stopped >= 0 &&
          after.some((e) => e.type === 'tool.completed') &&
          after.some((e) => e.type === 'tool.cancelled')
        );
      },
      60_000,
    );
    const end = events.findIndex((e) => e.type === 'run.cancelled' && e.runId === runId);
    expect(events[end]?.data).toMatchObject({ closedCalls: [], pendingCalls: ['call_1_1', 'call_1_2'] });
    // What really happened, after the end: the acting call completed, the queued one never ran.
    const settled = events.slice(end + 1).filter((e) => e.runId === runId && e.type.startsWith('tool.'));
    expect(settled.map((e) => [e.type, (e.data as { callId: string }).callId])).toEqual([
      ['tool.completed', 'call_1_1'],
      ['tool.cancelled', 'call_1_2'],
    ]);
    // The far side agrees: one effect for the acting call, none for the queued one.
    expect(effects.effectsFor(acting)).toBe(1);
    expect(effects.arrivalsFor(queued)).toBe(0);
    // And so does the ledger.
    const ledger = await threadEffects(tools.sql, TENANT, threadId);
    expect(Object.fromEntries(ledger.effects.map((e) => [e.callId, e.state]))).toEqual({
      call_1_1: 'succeeded',
      call_1_2: 'cancelled',
    });
    return events;
  }

  it('an at-most-once call acting when the run is cancelled finishes and is recorded; the queued one never runs', async () => {
    await stopWhileActing('charge', 'cancel', `cancel-charge-${p}`);
  });

  it('the same for an idempotent call', async () => {
    await stopWhileActing('upsert', 'cancel', `cancel-upsert-${p}`);
  });

  it('the same when a new run interrupts it, and the new run goes ahead', async () => {
    const marker = `interrupt-charge-${p}`;
    const events = await stopWhileActing('charge', 'interrupt', marker);
    const next = runIdFor(TENANT, `${marker}-next`);
    const all = await stack.waitFor(TENANT, threadIdFor(TENANT, marker), terminal(next), 60_000);
    expect(all.find((e) => e.type === 'run.started' && e.runId === next)).toBeDefined();
    // The new run did not wait for the old one's calls to settle.
    expect(all.find((e) => e.type === 'run.completed' && e.runId === next)).toBeDefined();
    expect(events.findIndex((e) => e.type === 'run.started' && e.runId === next)).toBeGreaterThan(
      events.findIndex((e) => e.type === 'run.cancelled'),
    );
  });
});

describe('a request id used again', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await stack.start('orchestrator', { AGENTS_DIR: agentsDir, OPENAI_API_KEY: 'sk-fake' });
  });
  afterAll(() => stack?.stop());

  /** Subscribes to a reply subject and collects what arrives. */
  function replies(subject: string): RunOutcome[] {
    const seen: RunOutcome[] = [];
    stack.nc.subscribe(subject, { callback: (_e, m) => seen.push(m.json<RunOutcome>()) });
    return seen;
  }

  it('with another body is refused as request.conflict; the same body again gets the first outcome, with the same outcomeId', async () => {
    const requestId = 'reused-1';
    const first = replies(`${stack.prefix.subject}.replies.first`);
    const conflicting = replies(`${stack.prefix.subject}.replies.conflicting`);
    const again = replies(`${stack.prefix.subject}.replies.again`);
    const body = ask(requestId, 'steady', 'reused-1 the question', {
      replyTo: `${stack.prefix.subject}.replies.first`,
    });
    await stack.publishRequest(TENANT, body);
    await until(() => first.length === 1, 30_000);
    expect(first[0]).toMatchObject({
      status: 'completed',
      outcomeId: `${runIdFor(TENANT, requestId)}:outcome:completed`,
    });
    // Same request id, another input: refused, and recorded on the thread it named. (Each is a new
    // message: with the same Nats-Msg-Id JetStream itself would drop it within its duplicate window.)
    await stack.publishRequest(
      TENANT,
      {
        ...body,
        input: [{ role: 'user', content: 'reused-1 a different question' }],
        replyTo: `${stack.prefix.subject}.replies.conflicting`,
      },
      'reused-1:conflicting-input',
    );
    // Same request id, another thread: refused too.
    await stack.publishRequest(
      TENANT,
      { ...body, threadId: 'th-elsewhere', replyTo: `${stack.prefix.subject}.replies.conflicting` },
      'reused-1:conflicting-thread',
    );
    await until(() => conflicting.length === 2, 30_000);
    for (const r of conflicting)
      expect(r).toMatchObject({
        status: 'rejected',
        error: { code: 'request.conflict' },
        runId: runIdFor(TENANT, requestId),
      });
    // The identical request again: answered with the run it started, not a second run.
    await stack.publishRequest(TENANT, { ...body, replyTo: `${stack.prefix.subject}.replies.again` }, 'reused-1:again');
    await until(() => again.length === 1, 30_000);
    expect(again[0]).toMatchObject({ status: 'completed', outcomeId: first[0]!.outcomeId, output: first[0]!.output });
    const events = await stack.events(TENANT, threadIdFor(TENANT, requestId));
    expect(events.filter((e) => e.type === 'run.started')).toHaveLength(1);
    expect(
      events.filter((e) => e.type === 'run.rejected').map((e) => (e.data as { error: { code: string } }).error.code),
    ).toEqual(['request.conflict']);
    expect(model.of('reused-1 the question').calls).toBe(1);
    expect(model.of('reused-1 a different question').calls).toBe(0);
  });
});

describe('a model worker SIGKILLed while its lease still runs (bus path, a patient watchdog)', () => {
  let stack: TestStack;
  const env = () => ({
    AGENTS_DIR: agentsDir,
    OPENAI_API_KEY: 'sk-fake',
    MODEL_LOCAL_CALLS: '0',
    // Nothing but the bus and the leases may recover the call: the watchdog would take 10 minutes.
    WATCHDOG_MIN_IDLE_MS: '600000',
  });
  beforeAll(async () => {
    stack = await TestStack.create();
    await stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: effects.url });
  });
  afterAll(() => stack?.stop());

  it("gives the call to a live worker once the dead one's lease ran out: one more attempt, no stall", async () => {
    // The doomed worker dies right after it renewed the lease of a call it holds: its message comes back to
    // the survivor (ack wait since its last heartbeat) before that lease ends.
    const doomed = await stack.start(
      'orchestrator',
      { ...env(), RATCHET_FAILPOINTS: 'orchestrator.model-lease.renewed@1' },
      'orchestrator-doomed',
    );
    await stack.start('orchestrator', env(), 'orchestrator-survivor');
    let died = false;
    void doomed.exited.then(() => (died = true));
    // Which orchestrator takes a call is the bus's choice: ask until the doomed one took one.
    const markers: string[] = [];
    for (let i = 0; i < 12 && !died; i++) {
      const marker = `lease-kill-${i}`;
      markers.push(marker);
      await stack.publishRequest(TENANT, ask(marker, 'steady', `${marker} [latency=4000]`));
      await until(() => died || model.of(marker).calls === 1);
      await until(() => died || model.of(marker).inFlight === 0, 60_000);
    }
    expect(died).toBe(true);
    expect((await doomed.exited).signal).toBe('SIGKILL');
    // The kill comes at a lease renewal: mostly while the call is still waiting for its answer (the model
    // sees it aborted), but a renewal that ends just after the answer came kills a process that had the
    // answer and had not committed it, and the loop may by then have asked the next question. So the
    // killed call is found by its retry, not assumed to be the last one asked.
    const killed: string[] = [];
    for (const marker of markers) {
      const events = await stack.waitFor(
        TENANT,
        threadIdFor(TENANT, marker),
        terminal(runIdFor(TENANT, marker)),
        90_000,
      );
      expect(events.at(-1)?.type).toBe('run.completed');
      const attempts = events.filter((e) => e.type === 'model.requested');
      const calls = model.of(marker);
      if (attempts.length === 1) {
        expect(calls.calls).toBe(1);
        continue;
      }
      killed.push(marker);
      // The killed call and its one retry: one more attempt, and the reason says why.
      expect(calls.calls).toBe(2);
      expect(calls.aborted).toBeLessThanOrEqual(1);
      expect(attempts.map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);
      expect((attempts[1]?.data as { retryReason?: string }).retryReason).toMatch(/stopped before answering/);
    }
    expect(killed).toHaveLength(1);
  });
});

async function cancel(stack: TestStack, threadId: string, runId: string): Promise<void> {
  const message: CancelRunMessage = {
    kind: 'run.cancel',
    messageId: `cancel:${runId}`,
    tenantId: TENANT,
    threadId,
    runId,
    by: 'alice',
    reason: 'changed my mind',
  };
  await stack.nc.jetstream().publish(`${stack.prefix.subject}.inbox.${TENANT}.${threadId}`, JSON.stringify(message), {
    msgID: message.messageId,
  });
}

async function until(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
