import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ThreadEvent, UsageReport } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { FakeModelServer, runProcess, sourceCommand } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * A tenant's token cap (docs/flow-control.md#token-and-cost-caps), hard across three orchestrators, one of them
 * SIGKILLed with calls in flight: the tenant's runs ask for far more than its daily cap; what its model
 * calls used (the log's model.responded usage, and the count the orchestrators keep) never passes the cap;
 * the runs the cap stops fail with budget `tenantTokens`; another tenant's runs complete; once an operator
 * raises the cap, a new run completes.
 */

jest.setTimeout(240_000);

const CAPPED = 'capped';
const FREE = 'uncapped';
const CAP = 600;
const model = new FakeModelServer();
const cli = sourceCommand('apps/cli/src/main.ts');
let stack: TestStack;

type Failed = Extract<ThreadEvent, { type: 'run.failed' }>;
type Responded = Extract<ThreadEvent, { type: 'model.responded' }>;

const ratchet = async (...args: string[]) => {
  const r = await runProcess(cli.command, [...cli.args, ...args], { ...cli.env, ...stack.env });
  expect({ args, code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ args, code: 0, stderr: '' });
  return r.stdout;
};

beforeAll(async () => {
  const baseUrl = await model.start();
  const agentsDir = mkdtempSync(path.join(tmpdir(), 'ratchet-caps-'));
  for (const [name, modelName] of [
    ['chat', 'fake-1'],
    ['mystery', 'mystery-1'],
  ])
    writeFileSync(
      path.join(agentsDir, `${name}.yaml`),
      `name: ${name}\nmodel:\n  provider: openai\n  name: ${modelName}\n  baseUrl: ${baseUrl}\n  parameters:\n    max_completion_tokens: 20\nstepTimeoutSeconds: 30\n`,
    );
  stack = await TestStack.create();
  const env = {
    AGENTS_DIR: agentsDir,
    OPENAI_API_KEY: 'sk-fake',
    TENANT_CAPS_CACHE_MS: '200',
    // 100 and 400 per million tokens: a call of about 21 tokens costs about 0.0045.
    MODEL_PRICES: JSON.stringify({ 'fake-1': { input: 100, output: 400 } }),
  };
  await Promise.all([
    stack.start('orchestrator', env, 'orchestrator-a'),
    stack.start('orchestrator', env, 'orchestrator-b'),
    stack.start('orchestrator', { ...env, MODEL_LOCAL_CALLS: '0' }, 'orchestrator-c'),
  ]);
});
afterAll(async () => {
  await stack?.stop();
  await model.stop();
});

const ask = (tenant: string, requestId: string, agent = 'chat') =>
  stack.publishRequest(tenant, {
    requestId,
    agent,
    input: [{ role: 'user', content: `${requestId} [latency=400]` }],
    principal: { id: 'alice', roles: ['runner'] },
  });
const ended = (tenant: string, ids: string[]) =>
  Promise.all(ids.map((id) => stack.waitFor(tenant, threadIdFor(tenant, id), terminal(runIdFor(tenant, id)), 120_000)));
const used = (logs: ThreadEvent[][]) =>
  logs
    .flat()
    .filter((e): e is Responded => e.type === 'model.responded')
    .reduce((n, e) => n + e.data.usage.inputTokens + e.data.usage.outputTokens, 0);

it('never passes the cap across three orchestrators and a SIGKILL; stops the capped runs; spares other tenants', async () => {
  expect(await ratchet('caps', 'set', '--tenant', CAPPED, '--day-tokens', String(CAP))).toContain(
    `tenant ${CAPPED}: ${CAP} tokens a day (UTC)`,
  );
  const ids = Array.from({ length: 40 }, (_, i) => `c-${i}`);
  const free = ['f-0', 'f-1', 'f-2', 'f-3'];
  for (const id of ids) await ask(CAPPED, id);
  for (const id of free) await ask(FREE, id);
  // Calls in flight when an orchestrator dies: they are made again elsewhere, and both count.
  await stack.waitFor(CAPPED, threadIdFor(CAPPED, ids.at(-1)!), (es) => es.some((e) => e.type === 'model.requested'));
  await stack.services.get('orchestrator-b')!.kill('SIGKILL');

  const logs = await ended(CAPPED, ids);
  const outcomes = logs.map((es) => es.at(-1)!);
  const capped = outcomes.filter((e): e is Failed => e.type === 'run.failed');
  // Every run either completed or was stopped by the tenant's cap, naming it.
  expect(outcomes.filter((e) => e.type === 'run.completed').length + capped.length).toBe(ids.length);
  expect(capped.length).toBeGreaterThan(0);
  for (const e of capped) {
    expect(e.data).toMatchObject({ budget: 'tenantTokens', error: { code: 'budget.exceeded' } });
    expect(e.data.error.message).toMatch(/^tenant token cap: the daily cap is 600 tokens; \d+ are used or reserved/);
  }
  expect(outcomes.filter((e) => e.type === 'run.completed').length).toBeGreaterThan(0);
  // What the calls used never passed the cap: in the log, and in the count the orchestrators keep.
  expect(used(logs)).toBeLessThanOrEqual(CAP);
  const listed = JSON.parse((await ratchet('caps', 'list', '--tenant', CAPPED, '--json')).trim()) as {
    dayTokens: number;
    counted: { day: number; month: number };
  };
  expect(listed.dayTokens).toBe(CAP);
  expect(listed.counted.day).toBeLessThanOrEqual(CAP);
  expect(listed.counted.day).toBeGreaterThanOrEqual(used(logs));
  // The usage figures are the log's, whatever the cap did.
  const usage = JSON.parse(
    (
      await ratchet('usage', '--tenant', CAPPED, '--from', new Date(Date.now() - 3_600_000).toISOString(), '--json')
    ).trim(),
  ) as UsageReport;
  expect(usage.total.totalTokens).toBe(used(logs));

  // Another tenant is not touched by this tenant's cap.
  for (const es of await ended(FREE, free)) expect(es.at(-1)?.type).toBe('run.completed');

  // Raised by an operator, the cap lets a new run complete (within TENANT_CAPS_CACHE_MS).
  await ratchet('caps', 'set', '--tenant', CAPPED, '--day-tokens', '100000');
  await new Promise((r) => setTimeout(r, 400));
  await ask(CAPPED, 'after-raise');
  const [after] = await ended(CAPPED, ['after-raise']);
  expect(after!.at(-1)?.type).toBe('run.completed');

  // Removed, it is gone from the list.
  await ratchet('caps', 'unset', '--tenant', CAPPED);
  expect((await ratchet('caps', 'list', '--json')).trim()).toBe('');
});

it('holds cost to a cost cap the same way; a model without a price is refused while one is set', async () => {
  const SPENDER = 'spender';
  const CAP_MICROS = 50_000;
  expect(await ratchet('caps', 'set', '--tenant', SPENDER, '--day-cost', '0.05')).toContain(
    `tenant ${SPENDER}: 0.05 a day (UTC)`,
  );
  const ids = Array.from({ length: 24 }, (_, i) => `s-${i}`);
  for (const id of ids) await ask(SPENDER, id);
  await ask(SPENDER, 'unpriced', 'mystery');
  const logs = await ended(SPENDER, ids);
  const cost = logs
    .flat()
    .filter((e): e is Responded => e.type === 'model.responded')
    .reduce((n, e) => n + (e.data.usage.costMicros ?? 0), 0);
  expect(cost).toBeGreaterThan(0);
  expect(cost).toBeLessThanOrEqual(CAP_MICROS);
  const stopped = logs.map((es) => es.at(-1)!).filter((e): e is Failed => e.type === 'run.failed');
  expect(stopped.length).toBeGreaterThan(0);
  for (const e of stopped) {
    expect(e.data).toMatchObject({ budget: 'tenantCost', error: { code: 'budget.exceeded' } });
    expect(e.data.error.message).toMatch(/^tenant cost cap: the daily cost cap is 0\.05; [\d.]+ is used or reserved/);
  }
  const [unpriced] = await ended(SPENDER, ['unpriced']);
  expect(unpriced!.at(-1)).toMatchObject({
    type: 'run.failed',
    data: {
      budget: 'tenantCost',
      error: {
        message:
          'tenant cost cap: the daily cost cap is 0.05, and the model mystery-1 has no price in MODEL_PRICES, so what its call costs cannot be held to it; it was not made',
      },
    },
  });
  const listed = JSON.parse((await ratchet('caps', 'list', '--tenant', SPENDER, '--json')).trim()) as {
    dayCost: number;
    counted: { dayCost: number };
  };
  expect(listed.dayCost).toBe(CAP_MICROS);
  expect(listed.counted.dayCost).toBeGreaterThanOrEqual(cost);
  expect(listed.counted.dayCost).toBeLessThanOrEqual(CAP_MICROS);
});
