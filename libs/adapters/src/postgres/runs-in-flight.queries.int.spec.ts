import type { RunDebounce, RunSlot, RunThrottle } from '@ratchet/contracts';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Database } from './orm';
import { admissionCandidates, supersededRuns } from './runs-in-flight.queries';
import { openServiceDatabase } from './service-database';

/*
 * What the admission pass asks for (ADR 0045): the first held run of each thread there is room for — under
 * each of its concurrency keys and under the tenant's bound — served round-robin across keys.
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
afterEach(async () => {
  await db.sql.run(`delete from ${db.sql.table('runs')}`);
  await db.sql.run(`delete from ${db.sql.table('threads')}`);
});

let version = 0;
let second = 0;
/** A runs row; a held run is queued on its thread (the thread's state names its first ticket and keys). */
async function run(
  tenant: string,
  thread: string,
  id: string,
  status: 'queued' | 'running' | 'completed',
  opts: {
    waitingOn?: 'admission' | 'approval';
    slots?: RunSlot[];
    firstOfThread?: boolean;
    priority?: number;
    throttle?: RunThrottle;
    debounce?: RunDebounce;
    since?: string;
    startedAt?: string;
    threadBusy?: boolean;
  } = {},
): Promise<void> {
  const since = opts.since ?? new Date(Date.UTC(2026, 11, 1, 10, 0, ++second)).toISOString();
  const keys = opts.slots?.map((s) => s.key) ?? null;
  await db.sql.run(
    `insert into ${db.sql.table('runs')}
       (tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, version, waiting_on,
        waiting_since, slot_keys, priority, throttle_key, started_at, debounce_key)
     values (?, ?, ?, ?, 'demo', 1, 'alice', ?, ?, ?, ?::timestamptz, (select array_agg(k) from jsonb_array_elements_text(?::jsonb) k), ?,
             ?, ?::timestamptz, ?)`,
    [
      tenant,
      id,
      thread,
      `req-${id}`,
      status,
      ++version,
      opts.waitingOn ?? null,
      opts.waitingOn ? since : null,
      keys && JSON.stringify(keys),
      opts.priority ?? 0,
      opts.throttle?.key ?? null,
      opts.startedAt ?? null,
      opts.debounce?.key ?? null,
    ],
  );
  if (opts.waitingOn === 'admission' && opts.firstOfThread !== false) {
    const state = {
      queue: [
        {
          runId: id,
          ...(opts.slots ? { slots: opts.slots } : {}),
          ...(opts.throttle ? { throttle: opts.throttle } : {}),
          ...(opts.debounce ? { debounce: opts.debounce } : {}),
        },
      ],
      active: opts.threadBusy ? { runId: `${id}-before` } : null,
    };
    await db.sql.run(
      `insert into ${db.sql.table('threads')} (tenant_id, thread_id, version, status, state)
       values (?, ?, 1, 'queued', ?::jsonb)
       on conflict (tenant_id, thread_id) do update set state = excluded.state`,
      [tenant, thread, JSON.stringify(state)],
    );
  }
}
const held = { waitingOn: 'admission' as const };
/** When the pass asks, for the cases without a throttle or a debounce (their time does not matter). */
const NOW = '2026-12-01T12:00:00.000Z';

it('offers each tenant its oldest held runs up to its room, one per thread, oldest first across tenants', async () => {
  // Tenant a: 2 in flight (a running run, a run queued behind it) of a bound of 3; a run waiting for a
  // human and an ended run do not count. Room for one: its oldest held thread's next run.
  await run('a', 'th-a1', 'a-running', 'running');
  await run('a', 'th-a1', 'a-behind', 'queued');
  await run('a', 'th-a2', 'a-approval', 'running', { waitingOn: 'approval' });
  await run('a', 'th-a3', 'a-done', 'completed');
  // Tenant b: nothing in flight, three held, two in one thread: the thread's later one waits its turn.
  await run('b', 'th-b1', 'b-held-1', 'queued', held);
  await run('b', 'th-b1', 'b-held-1-next', 'queued', { ...held, firstOfThread: false });
  await run('a', 'th-a5', 'a-held-1', 'queued', held);
  await run('a', 'th-a4', 'a-held-2', 'queued', held);
  await run('b', 'th-b2', 'b-held-2', 'queued', held);
  // Tenant c: at its bound, held runs wait.
  for (const i of [1, 2, 3]) await run('c', `th-c${i}`, `c-running-${i}`, 'running');
  await run('c', 'th-c9', 'c-held', 'queued', held);

  expect((await admissionCandidates(db.sql, 3, 100, NOW)).map((c) => c.runId)).toEqual([
    'b-held-1',
    'a-held-1',
    'b-held-2',
  ]);
  expect(await admissionCandidates(db.sql, 3, 2, NOW)).toEqual([
    { tenantId: 'b', threadId: 'th-b1', runId: 'b-held-1', slots: [] },
    { tenantId: 'a', threadId: 'th-a5', runId: 'a-held-1', slots: [] },
  ]);
  // A bound of 5: tenant c has room for two, tenant a for three (two held threads), b for its two threads.
  expect((await admissionCandidates(db.sql, 5, 100, NOW)).map((c) => c.runId).sort()).toEqual(
    ['a-held-1', 'a-held-2', 'b-held-1', 'b-held-2', 'c-held'].sort(),
  );
  // No bound at all (0): every held thread head.
  expect(await admissionCandidates(db.sql, 0, 100, NOW)).toHaveLength(5);
});

it('offers held runs only where each of their keys has room, as many per key as its room, round-robin across keys', async () => {
  const busy = (n: number): RunSlot[] => [{ key: `customer=${n}`, max: 2 }];
  // customer=1 is at its max (2 in flight); customer=2 has one in flight (room 1); customer=3 none (room 2).
  await run('t', 'th-r1', 'r1', 'running', { slots: busy(1) });
  await run('t', 'th-r2', 'r2', 'running', { slots: busy(1) });
  await run('t', 'th-r3', 'r3', 'running', { slots: busy(2) });
  // A run of customer=3 waiting for a human does not take its room.
  await run('t', 'th-r4', 'r4', 'running', { slots: busy(3), waitingOn: 'approval' });
  // Held, oldest first: five of customer 1, then three of customer 2, then three of customer 3.
  for (const i of [1, 2, 3, 4, 5]) await run('t', `th-1-${i}`, `c1-${i}`, 'queued', { ...held, slots: busy(1) });
  for (const i of [1, 2, 3]) await run('t', `th-2-${i}`, `c2-${i}`, 'queued', { ...held, slots: busy(2) });
  for (const i of [1, 2, 3]) await run('t', `th-3-${i}`, `c3-${i}`, 'queued', { ...held, slots: busy(3) });

  // Customer 1 has no room; customer 2 room for one (one in flight), customer 3 for two (none in flight).
  // In turn: a key's n-th held run with m runs in flight comes at place m + n — customer 3's first (0 + 1),
  // then customer 2's first (1 + 1, the older) and customer 3's second (0 + 2).
  const offered = await admissionCandidates(db.sql, 0, 100, NOW);
  expect(offered.map((c) => c.runId)).toEqual(['c3-1', 'c2-1', 'c3-2']);
  expect(offered[1]!.slots).toEqual(busy(2));

  // The tenant's bound (3 in flight of 5: room 2) takes them in the same order.
  expect((await admissionCandidates(db.sql, 5, 100, NOW)).map((c) => c.runId)).toEqual(['c3-1', 'c2-1']);

  // A run with two keys is offered only when both have room.
  await run('t', 'th-two', 'two-keys', 'queued', {
    ...held,
    slots: [{ key: 'customer=3', max: 2 }, ...busy(1)],
  });
  expect((await admissionCandidates(db.sql, 0, 100, NOW)).map((c) => c.runId)).not.toContain('two-keys');
});

it('orders held runs by priority, as if requested that many seconds earlier, so none starves', async () => {
  // One second apart (see `run`): old-low waited longest at -2 s (served as if at its time + 2 s); the runs
  // asked 10 s later at +2 s go before the runs of their own time at -2 s, not before old-low.
  await run('p', 'th-old-low', 'old-low', 'queued', { ...held, priority: -2 });
  second += 10;
  await run('p', 'th-low-1', 'low-1', 'queued', { ...held, priority: -2 });
  await run('p', 'th-low-2', 'low-2', 'queued', { ...held, priority: -2 });
  await run('p', 'th-high-1', 'high-1', 'queued', { ...held, priority: 2 });
  await run('p', 'th-high-2', 'high-2', 'queued', { ...held, priority: 2 });
  expect((await admissionCandidates(db.sql, 0, 100, NOW)).map((c) => c.runId)).toEqual([
    'old-low',
    'high-1',
    'high-2',
    'low-1',
    'low-2',
  ]);
  // Within one key the same order; the key's room decides how many.
  await db.sql.run(`delete from ${db.sql.table('runs')}`);
  const key: RunSlot[] = [{ key: 'customer=9', max: 1 }];
  await run('p', 'th-k-low', 'k-low', 'queued', { ...held, slots: key, priority: -5 });
  await run('p', 'th-k-high', 'k-high', 'queued', { ...held, slots: key, priority: 5 });
  expect((await admissionCandidates(db.sql, 0, 100, NOW)).map((c) => c.runId)).toEqual(['k-high']);
});

it('offers throttled held runs only while fewer than their limit started in the period before now, as many as there is room for', async () => {
  const at = '2026-12-01T12:00:00.000Z';
  const ago = (s: number) => new Date(Date.parse(at) - s * 1000).toISOString();
  const agent: RunThrottle = { key: 'support', limit: 2, periodSeconds: 60 };
  const user: RunThrottle = { key: 'support:userId=2', limit: 2, periodSeconds: 60 };
  // support: one start within the minute (an ended run's start counts), one before it: room for one more.
  await run('t', 'th-s1', 's1', 'completed', { throttle: agent, startedAt: ago(30) });
  await run('t', 'th-s2', 's2', 'running', { throttle: agent, startedAt: ago(90) });
  // support:userId=2: two starts within the minute, one of them stamped after now (a clock ahead): no room.
  await run('t', 'th-u1', 'u1', 'running', { throttle: user, startedAt: ago(10) });
  await run('t', 'th-u2', 'u2', 'running', { throttle: user, startedAt: ago(-5) });
  for (const i of [1, 2, 3]) await run('t', `th-h${i}`, `h${i}`, 'queued', { ...held, throttle: agent });
  await run('t', 'th-hu', 'hu', 'queued', { ...held, throttle: user });
  // A held run whose thread has a run going is not offered: its admission would start nothing.
  await run('t', 'th-busy', 'busy', 'queued', { ...held, threadBusy: true });

  expect(await admissionCandidates(db.sql, 0, 100, at)).toEqual([
    { tenantId: 't', threadId: 'th-h1', runId: 'h1', slots: [], throttle: agent },
  ]);
  // Thirty seconds later the start of 30 s ago has left the window: room for two.
  expect((await admissionCandidates(db.sql, 0, 100, ago(-31))).map((c) => c.runId)).toEqual(['h1', 'h2']);
  // And later still, the user's starts have left theirs too.
  expect((await admissionCandidates(db.sql, 0, 100, ago(-66))).map((c) => c.runId).sort()).toEqual(['h1', 'h2', 'hu']);
});

it('offers the latest debounced run of a key once its period is over, and names the runs a later request superseded', async () => {
  const at = '2026-12-01T12:00:00.000Z';
  const ago = (s: number) => new Date(Date.parse(at) - s * 1000).toISOString();
  const doc: RunDebounce = { key: 'indexer:documentId=1', periodSeconds: 5 };
  const other: RunDebounce = { key: 'indexer:documentId=2', periodSeconds: 5 };
  await run('t', 'th-d1', 'd1', 'queued', { ...held, debounce: doc, since: ago(9) });
  await run('t', 'th-d2', 'd2', 'queued', { ...held, debounce: doc, since: ago(6) });
  await run('t', 'th-o1', 'o1', 'queued', { ...held, debounce: other, since: ago(2) });

  // d2 is the latest of its key and its period is over; o1 still waits hers; d1 was superseded by d2.
  expect(await admissionCandidates(db.sql, 0, 100, at)).toEqual([
    { tenantId: 't', threadId: 'th-d2', runId: 'd2', slots: [], debounce: doc },
  ]);
  expect(await supersededRuns(db.sql, 100)).toEqual([{ tenantId: 't', threadId: 'th-d1', runId: 'd1', debounce: doc }]);
  expect((await admissionCandidates(db.sql, 0, 100, ago(-3))).map((c) => c.runId).sort()).toEqual(['d2', 'o1']);
});
