import {
  openServiceDatabase,
  SchedulesRepository,
  claimDueSchedules,
  withServiceTx,
  type Database,
} from '@ratchet/adapters';
import { RunRequest, runIdFor, subjects, threadIdFor } from '@ratchet/contracts';
import { freshCursor, type OutboxMessage, type Schedule } from '@ratchet/domain';
import { createLogger } from '@ratchet/platform';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Clock } from '../clock';
import { ScheduleTicker } from './schedule-ticker';

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

const t0 = Date.parse('2027-05-01T00:00:00.000Z');
const iso = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
const s = subjects('sched');

/** A clock the test steps. */
function steppedClock(): Clock & { set(seconds: number): void } {
  let now = t0;
  return { now: () => new Date(now), set: (seconds) => (now = t0 + seconds * 1000) };
}

function ticker(clock: Clock, worker: string, published: OutboxMessage[] = []) {
  return new ScheduleTicker(
    db,
    { publishCommitted: (m) => (published.push(...m), Promise.resolve(m.length)) },
    s,
    clock,
    createLogger('test', 'silent', worker),
    { intervalMs: 1000, graceMs: 60_000, batch: 10, worker },
  );
}

let n = 0;
async function given(overrides: Partial<Schedule> = {}): Promise<Schedule> {
  const schedule: Schedule = {
    id: `sch_${++n}`,
    tenantId: `tenant-${process.pid}-${n}`,
    timing: { kind: 'interval', everyMs: 2000 },
    agent: 'demo',
    input: 'tick',
    thread: 'new',
    overlap: 'cancel-previous',
    catchUp: { kind: 'skip' },
    paused: false,
    anchorAt: iso(0),
    principal: { id: 'alice', roles: ['runner'] },
    ...overrides,
  };
  await new SchedulesRepository(db.sql).insert(schedule, freshCursor(schedule, iso(0)));
  return schedule;
}

async function requestsOf(schedule: Schedule): Promise<RunRequest[]> {
  const rows = await db.sql.query<{ payload: unknown }>(
    `select payload from ${db.sql.table('outbox')} where subject = ? order by id`,
    [s.requests(schedule.tenantId)],
  );
  return rows.map((r) => RunRequest.parse(r.payload));
}

describe('schedule ticker (Postgres)', () => {
  it('two tickers stepping through 20 s of a 2 s schedule request each tick exactly once', async () => {
    const schedule = await given();
    const clock = steppedClock();
    const a = ticker(clock, 'a');
    const b = ticker(clock, 'b');
    for (let half = 1; half <= 40; half++) {
      clock.set(half / 2);
      await Promise.all([a.pass(), b.pass()]);
    }
    const requests = await requestsOf(schedule);
    expect(requests.map((r) => r.metadata['tickAt']).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => iso((i + 1) * 2)),
    );
    expect(new Set(requests.map((r) => r.requestId)).size).toBe(10);
    const ticks = await new SchedulesRepository(db.sql).ticks(schedule.tenantId, schedule.id, 100);
    expect(ticks).toHaveLength(10);
  });

  it('a schedule claimed by a ticker that dies before its commit is ticked by another', async () => {
    const schedule = await given();
    const clock = steppedClock();
    clock.set(2.5);
    const survivor = ticker(clock, 'survivor');
    let releaseDead!: () => void;
    let claimedByDead!: () => void;
    const claimed = new Promise<void>((r) => (claimedByDead = r));
    // The dying ticker: claims the due schedule, holds it, then its transaction rolls back (a crash).
    const dead = withServiceTx(db, async (tx) => {
      const due = await claimDueSchedules(tx, clock.now().toISOString(), 10);
      expect(due.map((d) => d.schedule.id)).toContain(schedule.id);
      claimedByDead();
      await new Promise<void>((r) => (releaseDead = r));
      throw new Error('killed');
    }).catch(() => 'rolled back');
    await claimed;
    await survivor.pass();
    expect(await requestsOf(schedule)).toHaveLength(0); // locked: skipped, not waited for
    releaseDead();
    expect(await dead).toBe('rolled back');
    await survivor.pass();
    expect((await requestsOf(schedule)).map((r) => r.metadata['tickAt'])).toEqual([iso(2)]);
  });

  it('a clock stepped forward catches up by the policy: once → one run for the missed ticks', async () => {
    const schedule = await given({ catchUp: { kind: 'once' } });
    const clock = steppedClock();
    const a = ticker(clock, 'a');
    clock.set(2.1);
    await a.pass();
    clock.set(600.1); // ten minutes later: ticks 4…540 s missed, 542…600 s on time
    await a.pass();
    const ticks = (await requestsOf(schedule)).map((r) => r.metadata['tickAt']);
    expect(ticks[0]).toBe(iso(2));
    expect(ticks[1]).toBe(iso(540));
    expect(ticks.slice(2)).toEqual(Array.from({ length: 30 }, (_, i) => iso(542 + i * 2)));
  });

  it('cancel-previous with a thread per tick cancels the run still going before the next starts', async () => {
    const schedule = await given({ overlap: 'cancel-previous' });
    const clock = steppedClock();
    const published: OutboxMessage[] = [];
    const a = ticker(clock, 'a', published);
    clock.set(2.1);
    await a.pass();
    const first = (await requestsOf(schedule))[0]!;
    const run = {
      runId: runIdFor(schedule.tenantId, first.requestId),
      threadId: threadIdFor(schedule.tenantId, first.requestId),
    };
    // The first tick's run is going, as the orchestrator records it.
    await db.sql.run(
      `insert into ${db.sql.table('runs')}
         (tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, version)
       values (?, ?, ?, ?, 'demo', 1, 'alice', 'running', 1)`,
      [schedule.tenantId, run.runId, run.threadId, first.requestId],
    );
    clock.set(4.1);
    await a.pass();
    const cancel = published.find((m) => m.subject === s.inbox(schedule.tenantId, run.threadId));
    expect(cancel?.payload).toMatchObject({ kind: 'run.cancel', runId: run.runId });
    expect((await requestsOf(schedule)).map((r) => r.metadata['tickAt'])).toEqual([iso(2), iso(4)]);
  });
});
