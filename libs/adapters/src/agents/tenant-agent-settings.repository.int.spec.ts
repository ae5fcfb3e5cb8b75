import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Database } from '../postgres/orm';
import { openServiceDatabase } from '../postgres/service-database';
import { TenantAgentSettingsRepository } from './tenant-agent-settings.repository';

let testDb: TestDatabase;
let db: Database;
let repo: TenantAgentSettingsRepository;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
  repo = new TenantAgentSettingsRepository(db.sql);
});
afterAll(async () => {
  await db?.close();
  await testDb.drop();
});

describe("a tenant's settings for an agent's runs", () => {
  const at = new Date('2026-12-07T10:00:00Z');

  it('sets each setting on its own, keeps the other, and removes the row when none is left', async () => {
    expect(await repo.of('acme', 'support')).toEqual({});
    expect(await repo.change('acme', 'support', { queueTtlSeconds: 3600 }, 'cli:alice', at)).toEqual({
      tenant: 'acme',
      agent: 'support',
      queueTtlSeconds: 3600,
      setAt: at.toISOString(),
      setBy: 'cli:alice',
    });
    await repo.change('acme', 'support', { priority: -300 }, 'cli:bob', at);
    expect(await repo.of('acme', 'support')).toEqual({ queueTtlSeconds: 3600, priority: -300 });
    expect(await repo.of('globex', 'support')).toEqual({});

    await repo.change('acme', 'support', { queueTtlSeconds: null }, 'cli:bob', at);
    expect(await repo.of('acme', 'support')).toEqual({ priority: -300 });
    expect(await repo.change('acme', 'support', { priority: null }, 'cli:bob', at)).toBeUndefined();
    expect(await repo.list()).toEqual([]);
    // Removing what was never set leaves nothing behind either.
    expect(await repo.change('acme', 'billing', { priority: null }, 'cli:bob', at)).toBeUndefined();
    expect(await repo.list('acme')).toEqual([]);
  });

  it("keeps a throttle's limit and period as two settings, each set and removed on its own", async () => {
    await repo.change('acme', 'support', { throttleLimit: 100, throttlePeriodSeconds: 60 }, 'cli:alice', at);
    expect(await repo.of('acme', 'support')).toEqual({ throttleLimit: 100, throttlePeriodSeconds: 60 });
    await repo.change('acme', 'support', { throttleLimit: 5, priority: 10 }, 'cli:alice', at);
    expect(await repo.of('acme', 'support')).toEqual({ throttleLimit: 5, throttlePeriodSeconds: 60, priority: 10 });
    await repo.change('acme', 'support', { throttleLimit: null, throttlePeriodSeconds: null }, 'cli:alice', at);
    expect(await repo.list('acme')).toEqual([
      { tenant: 'acme', agent: 'support', priority: 10, setAt: at.toISOString(), setBy: 'cli:alice' },
    ]);
    await repo.change('acme', 'support', { priority: null }, 'cli:alice', at);
    await expect(repo.change('acme', 'support', { throttlePeriodSeconds: 86_401 }, 'cli:alice', at)).rejects.toThrow(
      /check/,
    );
    expect(await repo.list('acme')).toEqual([]);
  });

  it('refuses values out of range in the table itself', async () => {
    await expect(repo.change('acme', 'support', { priority: 601 }, 'cli:alice', at)).rejects.toThrow(/check/);
    await expect(repo.change('acme', 'support', { queueTtlSeconds: 0 }, 'cli:alice', at)).rejects.toThrow(/check/);
    expect(await repo.of('acme', 'support')).toEqual({});
  });
});
