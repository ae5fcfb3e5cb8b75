import { MemoryItemsRepository, MEMORY_MIGRATIONS, openDatabase, type Database } from '@ratchet/adapters';
import type { MemoryPutRequest } from '@ratchet/contracts';
import { decidePut, DEFAULT_MEMORY_LIMITS, type MemoryRules } from '@ratchet/domain';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';

/*
 * The write guards on their own, without the service's timing: two writers that decided from the same
 * read both write, and the table lets exactly one of them win.
 */
const rules: MemoryRules = { limits: DEFAULT_MEMORY_LIMITS, retention: {} };
let testDb: TestDatabase;
let db: Database;
let repo: MemoryItemsRepository;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openDatabase({ url: testDb.url, schema: 'memory', migrations: MEMORY_MIGRATIONS, poolMax: 4 });
  repo = new MemoryItemsRepository(db.sql);
});

afterAll(async () => {
  await db?.close();
  await testDb?.drop();
});

const request = (value: number, overrides: Partial<MemoryPutRequest> = {}): MemoryPutRequest => ({
  principal: { id: 'alice', roles: [] },
  namespace: 'guards',
  key: 'k',
  value,
  provenance: {},
  refreshOnRead: false,
  ...overrides,
});

async function race(overrides: Partial<MemoryPutRequest>, now: Date): Promise<boolean[]> {
  const stored = await repo.find('acme', 'guards', overrides.key ?? 'k');
  const decisions = [1, 2].map((v) => decidePut(stored, request(v, overrides), now, rules));
  return Promise.all(decisions.map((d) => (d.ok ? repo.write('acme', d.item, d.guard) : Promise.resolve(false))));
}

it('lets one of two inserts from the same read win', async () => {
  expect((await race({}, new Date())).sort()).toEqual([false, true]);
});

it('lets one of two updates from the same read win', async () => {
  expect((await race({}, new Date())).sort()).toEqual([false, true]);
  expect((await repo.find('acme', 'guards', 'k'))?.version).toBe(2);
});

it('lets one of two replacements of the same expired row win', async () => {
  const past = new Date(Date.now() - 10_000);
  const first = decidePut(undefined, request(0, { key: 'e', ttlSeconds: 1 }), past, rules);
  if (!first.ok) throw new Error('setup');
  expect(await repo.write('acme', first.item, first.guard)).toBe(true);
  expect((await race({ key: 'e' }, new Date())).sort()).toEqual([false, true]);
  expect(await repo.find('acme', 'guards', 'e')).toMatchObject({ version: 1 });
});

it('refuses a value Postgres cannot store as a data error (SQLSTATE class 22), and keeps serving', async () => {
  const d = decidePut(undefined, request(1, { key: 'nul', value: 'a\u0000b' }), new Date(), rules);
  if (!d.ok) throw new Error('setup');
  await expect(repo.write('acme', d.item, d.guard)).rejects.toMatchObject({ code: expect.stringMatching(/^22/) });
  expect(await repo.find('acme', 'guards', 'k')).toBeDefined();
});
