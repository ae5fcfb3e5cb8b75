import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Database } from './orm';
import { admissionCandidates } from './runs-in-flight.queries';
import { openServiceDatabase } from './service-database';

/*
 * What the admission pass asks for (ADR 0045): per tenant, as many of its runs held for admission as it has
 * room for under the bound, one per thread (the thread's next), oldest first.
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

let version = 0;
async function run(
  tenant: string,
  thread: string,
  id: string,
  status: 'queued' | 'running' | 'completed',
  waitingOn: 'admission' | 'approval' | null = null,
  since = '2026-12-01T10:00:00.000Z',
): Promise<void> {
  await db.sql.run(
    `insert into ${db.sql.table('runs')}
       (tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, version, waiting_on, waiting_since)
     values (?, ?, ?, ?, 'demo', 1, 'alice', ?, ?, ?, ?::timestamptz)`,
    [tenant, id, thread, `req-${id}`, status, ++version, waitingOn, waitingOn ? since : null],
  );
}

it('offers each tenant its oldest held runs up to its room, one per thread, oldest first across tenants', async () => {
  // Tenant a: 2 in flight (a running run, a run queued behind it) of a bound of 3; a run waiting for a
  // human and an ended run do not count. Room for one: its oldest held thread's next run.
  await run('a', 'th-a1', 'a-running', 'running');
  await run('a', 'th-a1', 'a-behind', 'queued');
  await run('a', 'th-a2', 'a-approval', 'running', 'approval');
  await run('a', 'th-a3', 'a-done', 'completed');
  await run('a', 'th-a4', 'a-held-2', 'queued', 'admission', '2026-12-01T10:00:02.000Z');
  await run('a', 'th-a5', 'a-held-1', 'queued', 'admission', '2026-12-01T10:00:01.000Z');
  // Tenant b: nothing in flight, three held, two in one thread: the thread's later one waits its turn.
  await run('b', 'th-b1', 'b-held-1', 'queued', 'admission', '2026-12-01T10:00:00.500Z');
  await run('b', 'th-b1', 'b-held-1-next', 'queued', 'admission', '2026-12-01T10:00:00.600Z');
  await run('b', 'th-b2', 'b-held-2', 'queued', 'admission', '2026-12-01T10:00:03.000Z');
  // Tenant c: at its bound, held runs wait.
  for (const i of [1, 2, 3]) await run('c', `th-c${i}`, `c-running-${i}`, 'running');
  await run('c', 'th-c9', 'c-held', 'queued', 'admission');

  expect((await admissionCandidates(db.sql, 3, 100)).map((c) => c.runId)).toEqual(['b-held-1', 'a-held-1', 'b-held-2']);
  expect(await admissionCandidates(db.sql, 3, 2)).toEqual([
    { tenantId: 'b', threadId: 'th-b1', runId: 'b-held-1' },
    { tenantId: 'a', threadId: 'th-a5', runId: 'a-held-1' },
  ]);
  // A bound of 5: tenant c has room for two, tenant a for three (two held threads), b for its two threads.
  expect((await admissionCandidates(db.sql, 5, 100)).map((c) => c.runId).sort()).toEqual(
    ['a-held-1', 'a-held-2', 'b-held-1', 'b-held-2', 'c-held'].sort(),
  );
});
