import { createTestDatabase, newThreadRef, type TestDatabase } from '@ratchet/testing';
import { ModelCallLeases, type ModelCallRef } from './model-call-leases';
import type { Database } from './orm';
import { openServiceDatabase } from './service-database';

let testDb: TestDatabase;
let db: Database;
let leases: ModelCallLeases;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
  leases = new ModelCallLeases(db.sql);
});
afterAll(async () => {
  await db?.close();
  await testDb?.drop();
});

/**
 * A thread whose current model call is `commandId`, and that call's outbox row: published (as the relay
 * leaves it) unless `row` says otherwise.
 */
async function callOf(
  commandId: string,
  row: { sent?: boolean; leasedBy?: string; leaseMs?: number; createdAgoMs?: number } = {},
): Promise<ModelCallRef> {
  const ref = newThreadRef();
  const t = (name: string) => db.sql.table(name);
  const state = { active: { runId: 'r1', phase: 'model', modelCall: { commandId, attempt: 1 } } };
  await db.sql.run(
    `insert into ${t('threads')} (tenant_id, thread_id, version, status, agent, active_run_id, state)
     values (?, ?, 4, 'running', 'demo', 'r1', ?::jsonb)`,
    [ref.tenantId, ref.threadId, JSON.stringify(state)],
  );
  const id = `${ref.threadId}:${commandId}`;
  await db.sql.run(
    `insert into ${t('outbox')} (id, subject, headers, payload, created_at, sent_at, available_at, leased_by)
     values (?, 'x.cmd.model.t', '{}'::jsonb, ?::jsonb, now() - ?::float8 * interval '1 millisecond',
             case when ? then now() end, now() + ?::float8 * interval '1 millisecond', ?)`,
    [
      id,
      JSON.stringify({ tenantId: ref.tenantId, threadId: ref.threadId, commandId }),
      row.createdAgoMs ?? 0,
      row.sent ?? true,
      row.leaseMs ?? null,
      row.leasedBy ?? null,
    ],
  );
  return { id, tenantId: ref.tenantId, threadId: ref.threadId, commandId };
}

async function moveOn(call: ModelCallRef, to: string): Promise<void> {
  const state = { active: { runId: 'r1', phase: 'model', modelCall: { commandId: to, attempt: 2 } } };
  await db.sql.run(`update ${db.sql.table('threads')} set state = ?::jsonb where tenant_id = ? and thread_id = ?`, [
    JSON.stringify(state),
    call.tenantId,
    call.threadId,
  ]);
}

describe('model-call leases', () => {
  it('gives a call off the bus to one worker only, and only while it is current', async () => {
    const call = await callOf('m1');
    const claims = await Promise.all(['w1', 'w2', 'w3', 'w4'].map((w) => leases.claim(call, w, 60_000)));
    expect(claims.filter((c) => c === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c === 'held')).toHaveLength(3);
    const stale = await callOf('m2');
    await moveOn(stale, 'm3');
    expect(await leases.claim(stale, 'w1', 60_000)).toBe('stale');
  });

  it('lets a worker take a call whose holder stopped renewing, never one under a running lease', async () => {
    const held = await callOf('m1', { leasedBy: 'local', leaseMs: 60_000 });
    expect(await leases.claim(held, 'w1', 60_000)).toBe('held');
    // What a redelivery waits for: the holder, and how long its lease still runs.
    const lease = await leases.leaseOf(held.id);
    expect(lease?.holder).toBe('local');
    expect(lease?.leftMs).toBeGreaterThan(50_000);
    expect(lease?.leftMs).toBeLessThanOrEqual(60_000);
    const expired = await callOf('m1', { leasedBy: 'local', leaseMs: -1 });
    expect(await leases.claim(expired, 'w1', 60_000)).toBe('claimed');
    expect(await leases.leaseOf('no-such-row')).toBeUndefined();
    // The old holder, back from a pause, cannot take it back: it no longer holds it.
    expect(await leases.renew([expired.id], 'local', 60_000)).toEqual(new Set());
    expect(await leases.renew([expired.id], 'w1', 60_000)).toEqual(new Set([expired.id]));
  });

  it("refuses a redelivery the run's model-call budget has no room for", async () => {
    const call = await callOf('m1');
    const state = {
      active: {
        runId: 'r1',
        phase: 'model',
        modelCall: { commandId: 'm1', attempt: 2 },
        spent: { modelCalls: 2, tokens: 0 },
        limits: { modelCalls: 2 },
      },
    };
    await db.sql.run(`update ${db.sql.table('threads')} set state = ?::jsonb where tenant_id = ? and thread_id = ?`, [
      JSON.stringify(state),
      call.tenantId,
      call.threadId,
    ]);
    expect(await leases.claim(call, 'w1', 60_000, { redelivery: true })).toBe('over-budget');
    // The first delivery of the call was counted when it was commanded: it is within the budget.
    expect(await leases.claim(call, 'w1', 60_000)).toBe('claimed');
  });

  it('runs a current call whose row is gone without a lease', async () => {
    const call = await callOf('m1');
    await db.sql.run(`delete from ${db.sql.table('outbox')} where id = ?`, [call.id]);
    expect(await leases.claim(call, 'w1', 60_000)).toBe('unleased');
  });

  it('renews only the calls the holder has that are still current, in one statement', async () => {
    const a = await callOf('m1', { leasedBy: 'w1', leaseMs: 1_000 });
    const b = await callOf('m1', { leasedBy: 'w1', leaseMs: 1_000 });
    const other = await callOf('m1', { leasedBy: 'w2', leaseMs: 1_000 });
    await moveOn(b, 'm9'); // b's run moved on (answered, replaced, cancelled)
    expect(await leases.renew([a.id, b.id, other.id], 'w1', 60_000)).toEqual(new Set([a.id]));
  });

  it('fences a call nobody took for long enough; after that nobody can take or renew it', async () => {
    const young = await callOf('m1');
    expect(await leases.fence(young.id, 60_000)).toBe(false);
    const lost = await callOf('m1', { createdAgoMs: 120_000 });
    await db.sql.run(`update ${db.sql.table('outbox')} set sent_at = now() - interval '2 minutes' where id = ?`, [
      lost.id,
    ]);
    expect(await leases.fence(lost.id, 60_000)).toBe(true);
    expect(await leases.claim(lost, 'w1', 60_000)).toBe('fenced');
    expect(await leases.leaseOf(lost.id)).toEqual({ holder: null, leftMs: Infinity });
    expect(await leases.renew([lost.id], 'w1', 60_000)).toEqual(new Set());
    // Fencing again (a watchdog that fenced and stopped before it re-issued the call) still says yes.
    expect(await leases.fence(lost.id, 60_000)).toBe(true);
    const taken = await callOf('m1', { leasedBy: 'w1', leaseMs: 60_000, createdAgoMs: 120_000 });
    expect(await leases.fence(taken.id, 60_000)).toBe(false);
  });

  it('decides a claim and a fence of one row one after the other: never both', async () => {
    for (let i = 0; i < 10; i++) {
      const call = await callOf('m1', { createdAgoMs: 120_000 });
      await db.sql.run(`update ${db.sql.table('outbox')} set sent_at = now() - interval '2 minutes' where id = ?`, [
        call.id,
      ]);
      const [claim, fenced] = await Promise.all([leases.claim(call, 'w1', 60_000), leases.fence(call.id, 60_000)]);
      expect([claim === 'claimed', fenced]).not.toEqual([true, true]);
      expect(claim === 'claimed' || fenced).toBe(true);
    }
  });
});
