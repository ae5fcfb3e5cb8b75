import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Database } from './orm';
import { openServiceDatabase } from './service-database';
import { TenantCapCounters, TenantCapsRepository } from './tenant-caps';

/*
 * Tenant token caps held in Postgres: three replicas reserving for one tenant at once never count past its
 * cap; a period's count starts from the tenant's recorded usage; a settlement moves the count to what the
 * call used; an operator's first cap recounts, and removing the last one drops the counts.
 */
let testDb: TestDatabase;
const replicas: Database[] = [];
beforeAll(async () => {
  testDb = await createTestDatabase();
  for (let i = 0; i < 3; i++) replicas.push(await openServiceDatabase(testDb.url, 'orchestrator'));
});
afterAll(async () => {
  for (const db of replicas) await db.close();
  await testDb?.drop();
});

const recordUsage = (
  db: Database,
  tenant: string,
  id: string,
  tokens: number,
  at = 'now()',
  cost: number | null = null,
) =>
  db.sql.query(
    `insert into ${db.sql.table('model_usage')}
       (tenant_id, id, command_id, thread_id, run_id, agent, model, at, state, input_tokens, output_tokens, cost_micros)
     values (?, ?, ?, 't', 'r', 'a', 'm', ${at}, 'responded', ?, 0, ?)`,
    [tenant, id, id, tokens, cost],
  );

it('never counts past the cap, whichever replica reserves, and refuses naming what it counted', async () => {
  const tenant = 'capped-a';
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      new TenantCapCounters(replicas[i % 3]!).reserve(tenant, { dayTokens: 1000 }, { tokens: 70, cost: 7 }),
    ),
  );
  const went = answers.filter((a) => a.decision.go);
  expect(went).toHaveLength(14);
  expect(answers.filter((a) => !a.decision.go).map((a) => a.decision)).toContainEqual({
    go: false,
    cap: 'dayTokens',
    limit: 1000,
    used: 980,
    needs: 70,
  });
  const counters = new TenantCapCounters(replicas[0]!);
  expect(await counters.counts(tenant)).toEqual({ day: 980, month: 980, dayCost: 98, monthCost: 98 });
  // Settled with what the calls used, the room comes back.
  for (const a of went) if ('reservation' in a) await counters.settle(a.reservation, { tokens: 10, cost: 1 });
  expect(await counters.counts(tenant)).toEqual({ day: 140, month: 140, dayCost: 14, monthCost: 14 });
  expect((await counters.reserve(tenant, { dayTokens: 1000 }, { tokens: 860, cost: 0 })).decision.go).toBe(true);
  expect((await counters.reserve(tenant, { dayTokens: 1000 }, { tokens: 1, cost: 0 })).decision).toMatchObject({
    go: false,
    used: 1000,
  });
});

it("starts a period's count from the tenant's recorded usage of that period, and another tenant's is its own", async () => {
  const db = replicas[1]!;
  await recordUsage(db, 'capped-b', 'b1', 400);
  await recordUsage(db, 'capped-b', 'b2', 50, "now() - interval '40 days'");
  await recordUsage(db, 'capped-c', 'c1', 10_000);
  const counters = new TenantCapCounters(db);
  expect(
    (await counters.reserve('capped-b', { dayTokens: 500, monthTokens: 10_000 }, { tokens: 100, cost: 0 })).decision.go,
  ).toBe(true);
  expect(await counters.counts('capped-b')).toMatchObject({ day: 500, month: 500 });
  expect((await counters.reserve('capped-b', { dayTokens: 500 }, { tokens: 1, cost: 0 })).decision).toMatchObject({
    go: false,
    cap: 'dayTokens',
    used: 500,
  });
});

it('holds cost to a cost cap the same way, seeded from the recorded cost; an unpriced call is refused', async () => {
  const db = replicas[0]!;
  await recordUsage(db, 'capped-e', 'e1', 10, 'now()', 60);
  const counters = new TenantCapCounters(db);
  const caps = { monthCost: 100 };
  expect((await counters.reserve('capped-e', caps, { tokens: 1, cost: 50 })).decision).toEqual({
    go: false,
    cap: 'monthCost',
    limit: 100,
    used: 60,
    needs: 50,
  });
  expect((await counters.reserve('capped-e', caps, { tokens: 1, cost: undefined })).decision).toMatchObject({
    go: false,
    cap: 'monthCost',
  });
  const went = await counters.reserve('capped-e', caps, { tokens: 1, cost: 40 });
  expect(went.decision.go).toBe(true);
  expect(await counters.counts('capped-e')).toMatchObject({ dayCost: 100, monthCost: 100 });
  if ('reservation' in went) await counters.settle(went.reservation, { tokens: 1, cost: 15 });
  expect(await counters.counts('capped-e')).toMatchObject({ dayCost: 75, monthCost: 75 });
});

it("an operator's first cap recounts from the recorded usage; removing the last cap drops the counts", async () => {
  const db = replicas[2]!;
  const repo = new TenantCapsRepository(db.sql);
  const counters = new TenantCapCounters(db);
  const at = new Date('2026-12-07T10:00:00Z');
  expect(await repo.change(db, 'capped-d', { dayTokens: 100 }, 'ops', at)).toEqual({
    tenantId: 'capped-d',
    dayTokens: 100,
    setAt: '2026-12-07T10:00:00.000Z',
    setBy: 'ops',
  });
  await counters.reserve('capped-d', { dayTokens: 100 }, { tokens: 60, cost: 0 });
  // Raising it keeps the count.
  expect(await repo.change(db, 'capped-d', { dayTokens: 200, monthTokens: 5000 }, 'ops', at)).toMatchObject({
    dayTokens: 200,
    monthTokens: 5000,
  });
  expect(await counters.counts('capped-d')).toMatchObject({ day: 60, month: 60 });
  // Removing one keeps the other and the count; removing the last drops both.
  expect(await repo.change(db, 'capped-d', { dayTokens: null }, 'ops', at)).toMatchObject({ monthTokens: 5000 });
  expect(await counters.counts('capped-d')).toMatchObject({ day: 60, month: 60 });
  expect(await repo.change(db, 'capped-d', { monthTokens: null }, 'ops', at)).toBeUndefined();
  expect(await repo.of('capped-d')).toBeUndefined();
  expect(await counters.counts('capped-d')).toEqual({ day: 0, month: 0, dayCost: 0, monthCost: 0 });
  expect((await repo.list()).map((c) => c.tenantId)).not.toContain('capped-d');
});
