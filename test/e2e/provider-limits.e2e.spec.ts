import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { FakeModelServer } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * A provider limit shared by three orchestrators (docs/flow-control.md): the fake OpenAI-compatible server
 * counts every request it receives, and no window of the limit's length ever holds more than the limit,
 * whichever orchestrator made the calls, on the local path and through the bus, and while one
 * orchestrator is SIGKILLed with calls waiting on it. Calls that wait are commanded again for their turn
 * (a named wait in the log), not made and not counted as attempts.
 */

jest.setTimeout(240_000);

const TENANT = 'acme';
const LIMIT = 4;
const WINDOW_MS = 2_000;
const RUNS = 24;
const model = new FakeModelServer();
let stack: TestStack;

const requestsOf = (events: ThreadEvent[]) =>
  events.filter((e) => e.type === 'model.requested').map((e) => e.data as { attempt: number; waitFor?: unknown });

beforeAll(async () => {
  const baseUrl = await model.start();
  const agentsDir = mkdtempSync(path.join(tmpdir(), 'ratchet-limits-'));
  writeFileSync(
    path.join(agentsDir, 'limited.yaml'),
    `name: limited\nmodel:\n  provider: openai\n  name: fake-1\n  baseUrl: ${baseUrl}\nstepTimeoutSeconds: 30\n`,
  );
  const env = {
    AGENTS_DIR: agentsDir,
    OPENAI_API_KEY: 'sk-fake',
    MODEL_LIMITS: JSON.stringify([
      { name: 'fake', baseUrl, apiKeyEnv: 'OPENAI_API_KEY', requests: LIMIT, windowSeconds: WINDOW_MS / 1000 },
    ]),
  };
  stack = await TestStack.create();
  // Two orchestrators make the calls they commit themselves; the third sends its calls through the bus,
  // where any of the three model workers takes them.
  await stack.start('orchestrator', env, 'orchestrator-a');
  await stack.start('orchestrator', env, 'orchestrator-b');
  await stack.start('orchestrator', { ...env, MODEL_LOCAL_CALLS: '0' }, 'orchestrator-c');
});
afterAll(async () => {
  await stack?.stop();
  await model.stop();
});

it('never lets the provider see more than the limit in any window, across three orchestrators and a SIGKILL', async () => {
  const ids = Array.from({ length: RUNS }, (_, i) => `limited-${i}`);
  for (const id of ids) {
    await stack.publishRequest(TENANT, {
      requestId: id,
      agent: 'limited',
      input: [{ role: 'user', content: `${id} [latency=300]` }],
      principal: { id: 'alice', roles: [] },
    });
  }
  // Once calls wait for their turn, one orchestrator dies with some of them: another takes them over.
  await stack.waitFor(TENANT, threadIdFor(TENANT, ids.at(-1)!), (events) =>
    requestsOf(events).some((r) => r.waitFor !== undefined),
  );
  await stack.services.get('orchestrator-a')!.kill('SIGKILL');

  const logs = await Promise.all(
    ids.map((id) => stack.waitFor(TENANT, threadIdFor(TENANT, id), terminal(runIdFor(TENANT, id)), 180_000)),
  );
  for (const events of logs) expect(events.at(-1)?.type).toBe('run.completed');

  // What the provider saw: never more than the limit in a window of its length.
  expect(model.maxInWindow(WINDOW_MS)).toBeLessThanOrEqual(LIMIT);
  const waited = logs.filter((events) => requestsOf(events).some((r) => r.waitFor !== undefined));
  expect(waited.length).toBeGreaterThanOrEqual(RUNS - 2 * LIMIT);
  // A wait is not an attempt: a run whose call only waited asked the model once, as attempt 1.
  const onlyWaited = waited.filter((events) => requestsOf(events).every((r) => r.attempt === 1));
  expect(onlyWaited.length).toBeGreaterThan(0);
  for (const events of onlyWaited) {
    const id = events.find((e) => e.type === 'run.requested')!.data as { requestId: string };
    expect(model.of(`${id.requestId} [`).calls).toBe(1);
  }
  // Every request the provider saw was one the log knows: a call made, answered or taken over by another.
  expect(model.arrivals().length).toBeGreaterThanOrEqual(RUNS);
});
