import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Database } from '../postgres/orm';
import { openServiceDatabase } from '../postgres/service-database';
import { TenantSlotLimitsRepository } from './tenant-slot-limits.repository';

let testDb: TestDatabase;
let db: Database;
let repo: TenantSlotLimitsRepository;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
  repo = new TenantSlotLimitsRepository(db.sql);
});
afterAll(async () => {
  await db?.close();
  await testDb.drop();
});

describe("a tenant's own max for an agent's slot", () => {
  it('is read per tenant and agent, replaced when set again, and removed on unset', async () => {
    const at = new Date('2026-12-07T10:00:00Z');
    await repo.set({ tenant: 'acme', agent: 'support', slot: 'customer', max: 10, setBy: 'cli:alice' }, at);
    await repo.set({ tenant: 'acme', agent: 'support', slot: 'org', max: 3, setBy: 'cli:alice' }, at);
    await repo.set({ tenant: 'globex', agent: 'support', slot: 'customer', max: 1, setBy: 'cli:bob' }, at);

    expect(await repo.maxes('acme', 'support')).toEqual({ customer: 10, org: 3 });
    expect(await repo.maxes('globex', 'support')).toEqual({ customer: 1 });
    expect(await repo.maxes('acme', 'billing')).toEqual({});
    expect(await repo.maxes('initech', 'support')).toEqual({});

    const later = new Date('2026-12-07T11:00:00Z');
    await repo.set({ tenant: 'acme', agent: 'support', slot: 'customer', max: 4, setBy: 'cli:carol' }, later);
    expect(await repo.list('acme')).toEqual([
      { tenant: 'acme', agent: 'support', slot: 'customer', max: 4, setAt: later.toISOString(), setBy: 'cli:carol' },
      { tenant: 'acme', agent: 'support', slot: 'org', max: 3, setAt: at.toISOString(), setBy: 'cli:alice' },
    ]);
    expect((await repo.list()).map((l) => `${l.tenant}/${l.slot}`)).toEqual([
      'acme/customer',
      'acme/org',
      'globex/customer',
    ]);

    expect(await repo.unset('acme', 'support', 'org')).toBe(true);
    expect(await repo.unset('acme', 'support', 'org')).toBe(false);
    expect(await repo.maxes('acme', 'support')).toEqual({ customer: 4 });
  });

  it('refuses a max below 1 in the table itself', async () => {
    await expect(
      repo.set({ tenant: 'acme', agent: 'support', slot: 'customer', max: 0, setBy: 'cli:alice' }, new Date()),
    ).rejects.toThrow(/check/);
    expect(await repo.maxes('acme', 'support')).toEqual({ customer: 4 });
  });
});
