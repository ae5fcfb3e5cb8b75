import { openServiceDatabase, TenantCapCounters, TenantCapsRepository, type Database } from '@ratchet/adapters';
import { AgentDefinition, type ModelCallCommand } from '@ratchet/contracts';
import type { ModelOutcome } from '@ratchet/domain';
import { createLogger } from '@ratchet/platform';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import { boundedAnswer, TenantCapsGate } from '../../src/models/tenant-caps';

/*
 * The orchestrator's side of a tenant's token caps, on a real Postgres: a call reserves its prompt at a
 * token per byte and its answer at its maximum (asked of the provider when the agent sets none); after the
 * call the count becomes what the provider reported, 0 when the provider refused it, and stays reserved when
 * the provider may have answered unseen. A tenant without caps costs no reservation.
 */
let testDb: TestDatabase;
let db: Database;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
});
afterAll(async () => {
  await db?.close();
  await testDb?.drop();
});

const agent = (parameters: Record<string, unknown> = {}) =>
  AgentDefinition.parse({
    name: 'chat',
    model: { provider: 'openai', name: 'fake-1', baseUrl: 'http://127.0.0.1:1', parameters },
  });
const command = (tenantId: string) => ({ tenantId }) as ModelCallCommand;
const messages = [{ role: 'user' as const, content: 'héllo' }];
const PROMPT_BYTES = Buffer.byteLength(JSON.stringify(messages[0]));
const ok = (tokens: number): ModelOutcome => ({
  status: 'ok',
  content: 'hi',
  toolCalls: [],
  usage: { inputTokens: tokens - 1, outputTokens: 1 },
  model: 'fake-1',
});
const failed = (code: string): ModelOutcome => ({ status: 'error', error: { code, message: code, retryable: true } });

it("bounds an answer by the agent's own max, or asks the provider for the default", () => {
  expect(boundedAnswer(agent({ max_tokens: 300 }), 4096)).toMatchObject({ maxOutput: 300 });
  expect(boundedAnswer(agent({ max_completion_tokens: 50 }), 4096).agent.model).toMatchObject({
    parameters: { max_completion_tokens: 50 },
  });
  const bounded = boundedAnswer(agent({ temperature: 0 }), 4096);
  expect(bounded.maxOutput).toBe(4096);
  expect(bounded.agent.model).toMatchObject({ parameters: { temperature: 0, max_completion_tokens: 4096 } });
});

it('reserves, then settles to what was used: reported, nothing when refused, all when it may have been billed', async () => {
  const tenant = 'gate-a';
  const at = new Date('2026-12-07T10:00:00Z');
  await new TenantCapsRepository(db.sql).change(db, tenant, { dayTokens: 10_000 }, 'ops', at);
  const counters = new TenantCapCounters(db);
  const gate = new TenantCapsGate(
    new TenantCapsRepository(db.sql),
    counters,
    { cacheMs: 0, defaultMaxOutputTokens: 100 },
    createLogger('test', 'silent', 'test'),
  );
  const needs = PROMPT_BYTES + 100;
  const asks = async () => {
    const a = await gate.ask(command(tenant), agent(), { messages, tools: [] });
    if (!a.go) throw new Error(a.message);
    return a;
  };
  const first = await asks();
  expect(first.agent.model).toMatchObject({ parameters: { max_completion_tokens: 100 } });
  expect(await counters.counts(tenant)).toMatchObject({ day: needs, month: needs });
  await first.settle(ok(40));
  expect((await counters.counts(tenant)).day).toBe(40);
  await (await asks()).settle(failed('rate_limited'));
  expect((await counters.counts(tenant)).day).toBe(40);
  await (await asks()).settle(failed('timeout'));
  expect((await counters.counts(tenant)).day).toBe(40 + needs);

  // At the cap, the call is refused with what was counted; another tenant has no caps and no count.
  await new TenantCapsRepository(db.sql).change(db, tenant, { dayTokens: 40 + needs }, 'ops', at);
  const refused = await gate.ask(command(tenant), agent(), { messages, tools: [] });
  expect(refused).toEqual({
    go: false,
    code: 'tenant_cap',
    message: `the daily cap is ${40 + needs} tokens; ${40 + needs} are used or reserved today (UTC) and this model call may use up to ${needs}, so it was not made`,
  });
  const free = await gate.ask(command('gate-free'), agent(), { messages, tools: [] });
  expect(free.go && free.agent).toEqual(agent());
  expect(await counters.counts('gate-free')).toEqual({ day: 0, month: 0, dayCost: 0, monthCost: 0 });
});

it('holds cost to a cost cap at the model’s price: reserved at most, settled at the answer’s cost; an unpriced model is refused', async () => {
  const tenant = 'gate-cost';
  await new TenantCapsRepository(db.sql).change(db, tenant, { dayCost: 1_000_000 }, 'ops', new Date());
  const counters = new TenantCapCounters(db);
  const gate = new TenantCapsGate(
    new TenantCapsRepository(db.sql),
    counters,
    { cacheMs: 0, defaultMaxOutputTokens: 100, prices: { 'fake-1': { input: 2.5, output: 10 } } },
    createLogger('test', 'silent', 'test'),
  );
  const a = await gate.ask(command(tenant), agent(), { messages, tools: [] });
  if (!a.go) throw new Error(a.message);
  expect(await counters.counts(tenant)).toMatchObject({ dayCost: Math.ceil(PROMPT_BYTES * 2.5 + 100 * 10) });
  await a.settle({ ...ok(40), usage: { inputTokens: 39, outputTokens: 1, costMicros: 108 } } as ModelOutcome);
  expect(await counters.counts(tenant)).toMatchObject({ day: 40, dayCost: 108 });
  const unpriced = await gate.ask(
    command(tenant),
    AgentDefinition.parse({
      name: 'x',
      model: { provider: 'openai', name: 'mystery-1', baseUrl: 'http://127.0.0.1:1' },
    }),
    { messages, tools: [] },
  );
  expect(unpriced).toEqual({
    go: false,
    code: 'tenant_cost_cap',
    message:
      'the daily cost cap is 1, and the model mystery-1 has no price in MODEL_PRICES, so what its call costs cannot be held to it; it was not made',
  });
});
