import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ThreadEvent, UsageReport } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { FakeModelServer, runProcess, sourceCommand } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * Usage (docs/flow-control.md#usage): what a tenant's model calls spent, by day, agent and model, equals
 * the sum of the `model.responded` usage in its threads' logs over the same window — through the gateway
 * and the CLI, with an orchestrator SIGKILLed in the middle of model calls (the calls it was making count as
 * aborted, as the log's redeliveries show them), another tenant's calls apart, and after a thread is erased.
 */

jest.setTimeout(240_000);

const TENANT = 'usage';
const OTHER = 'usageother';
const KEY = 'rk_usage_e2e_bootstrap_key_0123456789';
const model = new FakeModelServer();
const cli = sourceCommand('apps/cli/src/main.ts');
let stack: TestStack;
let base: string;
let env: Record<string, string>;

type Responded = Extract<ThreadEvent, { type: 'model.responded' }>;

beforeAll(async () => {
  const baseUrl = await model.start();
  const agentsDir = mkdtempSync(path.join(tmpdir(), 'ratchet-usage-'));
  for (const [name, modelName] of [
    ['talker', 'fake-small'],
    ['writer', 'fake-large'],
  ])
    writeFileSync(
      path.join(agentsDir, `${name}.yaml`),
      `name: ${name}\nmodel:\n  provider: openai\n  name: ${modelName}\n  baseUrl: ${baseUrl}\nstepTimeoutSeconds: 30\n`,
    );
  stack = await TestStack.create();
  // One model priced, one not: the figures say which calls their cost leaves out.
  env = {
    AGENTS_DIR: agentsDir,
    OPENAI_API_KEY: 'sk-fake',
    MODEL_PRICES: JSON.stringify({ 'fake-small': { input: 2.5, output: 10 } }),
  };
  await stack.start('orchestrator', env, 'orchestrator-a');
  const gateway = await stack.start('gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: TENANT });
  base = `http://127.0.0.1:${gateway.port}`;
});
afterAll(async () => {
  await stack?.stop();
  await model.stop();
});

const api = async (method: string, route: string) =>
  fetch(`${base}${route}`, { method, headers: { authorization: `Bearer ${KEY}` } });

const ask = (tenant: string, requestId: string, agent: string, content: string) =>
  stack.publishRequest(tenant, {
    requestId,
    agent,
    input: [{ role: 'user', content }],
    principal: { id: 'alice', roles: ['runner'] },
  });

const finished = (tenant: string, ids: string[]) =>
  Promise.all(ids.map((id) => stack.waitFor(tenant, threadIdFor(tenant, id), terminal(runIdFor(tenant, id)), 120_000)));

/** The log's figures: every answer's usage, and the calls it shows made without their answer used. */
function fromLogs(logs: ThreadEvent[][], from: string, to: string) {
  const inWindow = (e: ThreadEvent) => e.at >= from && e.at < to;
  const answers = logs.flat().filter((e): e is Responded => e.type === 'model.responded' && inWindow(e));
  const sum = (es: Responded[]) => ({
    calls: es.length,
    inputTokens: es.reduce((n, e) => n + e.data.usage.inputTokens, 0),
    outputTokens: es.reduce((n, e) => n + e.data.usage.outputTokens, 0),
    cost: es.reduce((n, e) => n + (e.data.usage.costMicros ?? 0), 0) / 1_000_000,
    unpricedCalls: es.filter((e) => e.data.usage.costMicros === undefined).length,
  });
  const aborted = logs
    .flat()
    .filter(
      (e) =>
        inWindow(e) &&
        ((e.type === 'model.requested' && (e.data.delivery ?? 1) > 1) ||
          (e.type === 'result.ignored' &&
            e.data.kind === 'model.result' &&
            (e.data.outcome === 'ok' || e.data.outcome === 'error:timeout'))),
    ).length;
  return { answers, sum, aborted };
}

it('equals the sum of the log’s model.responded usage, by day, agent and model, through a SIGKILL and an erasure', async () => {
  const from = new Date(Date.now() - 1000).toISOString();
  const fast = ['t-0', 't-1', 't-2', 'w-0', 'w-1'];
  for (const id of fast)
    await ask(TENANT, id, id.startsWith('t') ? 'talker' : 'writer', `${id} [usage=${100 + fast.indexOf(id) * 37}]`);
  const others = ['o-0', 'o-1'];
  for (const id of others) await ask(OTHER, id, 'talker', `${id} [usage=5000]`);
  await finished(TENANT, fast);
  await finished(OTHER, others);

  // Calls in flight when the orchestrator making them dies: another takes them over (redelivered).
  const slow = ['s-0', 's-1', 's-2'];
  for (const id of slow) await ask(TENANT, id, 'writer', `${id} [latency=6000] [usage=700]`);
  await Promise.all(
    slow.map((id) =>
      stack.waitFor(TENANT, threadIdFor(TENANT, id), (es) => es.some((e) => e.type === 'model.requested')),
    ),
  );
  await new Promise((r) => setTimeout(r, 500));
  await stack.services.get('orchestrator-a')!.kill('SIGKILL');
  await stack.start('orchestrator', env, 'orchestrator-b');
  const ids = [...fast, ...slow];
  const logs = await finished(TENANT, ids);
  for (const events of logs) expect(events.at(-1)?.type).toBe('run.completed');
  const to = new Date(Date.now() + 1000).toISOString();

  const { answers, sum, aborted } = fromLogs(logs, from, to);
  expect(aborted).toBeGreaterThanOrEqual(1);
  const res = await api('GET', `/v1/usage?from=${from}&to=${to}&by=day,agent,model`);
  expect(res.status).toBe(200);
  const usage = (await res.json()) as UsageReport;
  const total = sum(answers);
  expect(usage.total).toEqual({
    ...total,
    totalTokens: total.inputTokens + total.outputTokens,
    abortedCalls: aborted,
  });
  // Each group is its slice of the log; days are the answers' UTC days.
  for (const g of usage.groups) {
    const own = answers.filter(
      (e) =>
        e.at.slice(0, 10) === g.day &&
        e.data.model === g.model &&
        logs.some((l) => l.includes(e) && l.some((x) => x.type === 'run.requested' && x.data.agent === g.agent)),
    );
    expect({ group: g, ...sum(own) }).toEqual({
      group: g,
      calls: g.calls,
      inputTokens: g.inputTokens,
      outputTokens: g.outputTokens,
      cost: g.cost,
      unpricedCalls: g.unpricedCalls,
    });
    // Each answer priced by the table (2.5 and 10 per million tokens, in whole millionths); the other model has none.
    for (const e of own)
      expect(e.data.usage.costMicros).toBe(
        g.model === 'fake-small'
          ? Math.round(e.data.usage.inputTokens * 2.5 + e.data.usage.outputTokens * 10)
          : undefined,
      );
    if (g.model === 'fake-small') expect(g.cost).toBeGreaterThan(0);
    else expect({ cost: g.cost, unpricedCalls: g.unpricedCalls }).toEqual({ cost: 0, unpricedCalls: g.calls });
  }
  expect(new Set(usage.groups.map((g) => `${g.agent}/${g.model}`))).toEqual(
    new Set(['talker/fake-small', 'writer/fake-large']),
  );
  expect(usage.groups.reduce((n, g) => n + g.calls, 0)).toBe(usage.total.calls);

  // One run's figures; another tenant's calls are its own (through the CLI, as an operator).
  const one = (await (await api('GET', `/v1/usage?runId=${runIdFor(TENANT, 'w-1')}`)).json()) as UsageReport;
  const w1 = answers.filter((e) => e.runId === runIdFor(TENANT, 'w-1'));
  expect(one.total.calls).toBe(w1.length);
  expect(one.total.inputTokens).toBe(sum(w1).inputTokens);
  const otherLogs = await Promise.all(others.map((id) => stack.events(OTHER, threadIdFor(OTHER, id))));
  const viaCli = await runProcess(
    cli.command,
    [...cli.args, 'usage', '--tenant', OTHER, '--from', from, '--to', to, '--by', 'model', '--json'],
    { ...cli.env, ...stack.env },
  );
  expect(viaCli.code).toBe(0);
  const otherUsage = JSON.parse(viaCli.stdout.trim()) as UsageReport;
  const otherSum = fromLogs(otherLogs, from, to);
  expect(otherUsage.total).toMatchObject({ ...otherSum.sum(otherSum.answers), abortedCalls: 0 });
  expect(otherUsage.groups.map((g) => g.model)).toEqual(['fake-small']);
  expect(otherUsage.total.inputTokens).toBe(10_000);

  // A thread's erasure takes its content, not its spend.
  expect((await api('DELETE', `/v1/threads/${threadIdFor(TENANT, 't-0')}`)).status).toBe(200);
  const after = (await (await api('GET', `/v1/usage?from=${from}&to=${to}`)).json()) as UsageReport;
  expect(after.total).toEqual(usage.total);
  expect(after.groups).toEqual([]);
  // Its figures no longer name it or its run: they count under `erased`.
  const erasedRun = (await (
    await api('GET', `/v1/usage?from=${from}&to=${to}&runId=${runIdFor(TENANT, 't-0')}`)
  ).json()) as UsageReport;
  expect(erasedRun.total.calls).toBe(0);
  const byRun = (await (await api('GET', `/v1/usage?from=${from}&to=${to}&by=run`)).json()) as UsageReport;
  expect(byRun.groups.find((g) => g.runId === 'erased')?.calls).toBe(
    answers.filter((e) => e.runId === runIdFor(TENANT, 't-0')).length,
  );

  // Bad input is refused naming the problem.
  const bad = await api('GET', `/v1/usage?by=week`);
  expect(bad.status).toBe(400);
  expect(JSON.stringify(await bad.json())).toContain('unknown dimension');
  const backwards = await api('GET', `/v1/usage?from=2026-12-07&to=2026-12-01`);
  expect(backwards.status).toBe(400);
  expect(JSON.stringify(await backwards.json())).toContain('must be after from');
});
