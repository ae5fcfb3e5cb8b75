import { createTestDatabase, newThreadRef, type TestDatabase } from '@ratchet/testing';
import { ApiKeyRepository, hashApiKey } from './api-key.repository';
import { EffectLedgerRepository } from './effect-ledger.repository';
import type { StartEffect } from './effect-ledger.records';
import { listFailures } from './failed-messages.repository';
import type { Database } from './orm';
import { withServiceTx } from './pg-service-tx';
import { listRuns, PgThreadStore } from './pg-thread-store';
import { openServiceDatabase } from './service-database';

let testDb: TestDatabase;
let tools: Database;
let gateway: Database;
let orchestrator: Database;
beforeAll(async () => {
  testDb = await createTestDatabase();
  [tools, gateway, orchestrator] = await Promise.all([
    openServiceDatabase(testDb.url, 'tools'),
    openServiceDatabase(testDb.url, 'gateway'),
    openServiceDatabase(testDb.url, 'orchestrator'),
  ]);
});
afterAll(async () => {
  await Promise.all([tools?.close(), gateway?.close(), orchestrator?.close()]);
  await testDb.drop();
});

const effect = (): StartEffect => {
  const ref = newThreadRef();
  return {
    key: `key-${ref.threadId}`,
    ...ref,
    runId: 'run-1',
    callId: 'call-1',
    tool: 'http.post',
    kind: 'side-effect',
  };
};

describe('withServiceTx', () => {
  it('commits inbox, outbox, failures and service rows together, or none of them', async () => {
    const e = effect();
    await expect(
      withServiceTx(tools, async (tx) => {
        expect(await tx.claimInbox('tools', 'msg-1')).toBe(true);
        await tx.enqueue([{ id: 'out-1', subject: 'ratchet.x', headers: {}, payload: { a: 1 } }]);
        await tx.recordFailure('tools', 'ratchet.cmd', 7, 'message.poison', 'bad', '{"x":1}');
        expect(await new EffectLedgerRepository(tx).recordStarted(e)).toBe('inserted');
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await new EffectLedgerRepository(tools.sql).get(e.key)).toBeUndefined();
    expect(await listFailures(tools.sql)).toEqual([]);

    await withServiceTx(tools, async (tx) => {
      expect(await tx.claimInbox('tools', 'msg-1')).toBe(true);
      await tx.enqueue([{ id: 'out-1', subject: 'ratchet.x', headers: {}, payload: { a: 1 } }]);
      await tx.recordFailure('tools', 'ratchet.cmd', 7, 'message.poison', 'bad', '{"x":1}');
      await tx.recordFailure('tools', 'ratchet.cmd', null, 'message.poison', "it's ?", '');
      const rows = await tx.execute<{ n: number }>(`select count(*)::int as n from ${tx.table('outbox')}`);
      expect(rows).toEqual([{ n: 1 }]);
    });
    expect(await withServiceTx(tools, (tx) => tx.claimInbox('tools', 'msg-1'))).toBe(false);
    const failures = await listFailures(tools.sql);
    expect(failures.map((f) => [f.streamSeq, f.reason])).toEqual([
      [null, "it's ?"],
      [7, 'bad'],
    ]);
    expect(failures[0]!.failedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

describe('EffectLedgerRepository', () => {
  it('records an effect once and returns the existing row to later claimers', async () => {
    const e = effect();
    const ledger = new EffectLedgerRepository(tools.sql);
    expect(await ledger.get(e.key)).toBeUndefined();
    expect(await withServiceTx(tools, (tx) => new EffectLedgerRepository(tx).recordStarted(e))).toBe('inserted');
    const again = await ledger.recordStarted({ ...e, callId: 'other' });
    expect(again).toMatchObject({ ...e, state: 'started', attempts: 1, result: null, finishedAt: null });
    expect(await ledger.recordAttempt(e.key)).toBe(2);
    expect(
      await ledger.recordOutcome(
        e.key,
        'succeeded',
        { status: 201, body: "ok ' ?" },
        { state: 'started', attempts: 2 },
      ),
    ).toBe('recorded');
    const done = await ledger.get(e.key);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 2, result: { status: 201, body: "ok ' ?" } });
    expect(done!.finishedAt).not.toBeNull();
    expect(await ledger.listByThread(e.tenantId, e.threadId)).toEqual([done]);
    expect(await ledger.listByThread(e.tenantId, 'other')).toEqual([]);
  });

  it('keeps the traceparent of the attempt that last claimed the effect, for the next attempt to link to', async () => {
    const e = effect();
    const first = `00-${'1'.repeat(32)}-${'a'.repeat(16)}-01`;
    const second = `00-${'1'.repeat(32)}-${'b'.repeat(16)}-01`;
    const ledger = new EffectLedgerRepository(tools.sql);
    expect(await ledger.recordStarted({ ...e, traceparent: first })).toBe('inserted');
    expect(await ledger.recordStarted({ ...e, traceparent: second })).toMatchObject({ traceparent: first });
    await ledger.recordAttempt(e.key, second);
    expect((await ledger.get(e.key))?.traceparent).toBe(second);
    await ledger.recordAttempt(e.key); // without one (telemetry off and no header): the last one stays
    expect((await ledger.get(e.key))?.traceparent).toBe(second);
  });

  it('lets only one of two concurrent claimers insert', async () => {
    const e = effect();
    const results = await Promise.all(
      [1, 2].map(() => withServiceTx(tools, (tx) => new EffectLedgerRepository(tx).recordStarted(e))),
    );
    expect(results.filter((r) => r === 'inserted')).toHaveLength(1);
    expect(results.find((r) => r !== 'inserted')).toMatchObject({ key: e.key, state: 'started' });
  });

  it('refuses outcomes for unknown keys and unknown states', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const claim = { state: 'started', attempts: 1 } as const;
    await expect(ledger.recordOutcome('nope', 'failed', null, claim)).rejects.toThrow(/never started/);
    const e = effect();
    await ledger.recordStarted(e);
    await expect(ledger.recordOutcome(e.key, 'exploded' as 'failed', null, claim)).rejects.toThrow(/check/);
    // Never backwards: an attempt does not answer for a human, nor move a final row.
    await expect(ledger.recordOutcome(e.key, 'succeeded', null, { state: 'uncertain', attempts: 1 })).rejects.toThrow(
      /cannot move it from uncertain/,
    );
  });

  it('records an outcome and its result message in one statement, both or neither', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const outbox = tools.sql.table('outbox');
    const message = (id: string) => ({ id, subject: 't.inbox.a.b', headers: { k: "v '?" }, payload: { ok: "it's ?" } });
    const e = effect();
    await ledger.recordStarted(e);
    const claim = { state: 'started', attempts: 1 } as const;
    await ledger.recordOutcomeWithMessage(e.key, 'succeeded', { ok: true }, message(`${e.key}:result`), claim);
    expect(await ledger.get(e.key)).toMatchObject({ state: 'succeeded', result: { ok: true } });
    expect(await tools.sql.query(`select headers, payload from ${outbox} where id = ?`, [`${e.key}:result`])).toEqual([
      { headers: { k: "v '?" }, payload: { ok: "it's ?" } },
    ]);
    // An effect that was never started: refused, and no message is left behind.
    await expect(
      ledger.recordOutcomeWithMessage('nope', 'failed', null, message('nope:result'), claim),
    ).rejects.toThrow(/never started/);
    expect(await tools.sql.query(`select id from ${outbox} where id = ?`, ['nope:result'])).toEqual([]);
    // A bad state fails the whole statement: the outcome is not recorded and no message is enqueued.
    const f = effect();
    await ledger.recordStarted(f);
    await expect(
      ledger.recordOutcomeWithMessage(f.key, 'exploded' as 'failed', null, message(`${f.key}:result`), claim),
    ).rejects.toThrow(/check/);
    expect(await ledger.get(f.key)).toMatchObject({ state: 'started' });
    expect(await tools.sql.query(`select id from ${outbox} where id = ?`, [`${f.key}:result`])).toEqual([]);
  });

  it('never lets a late attempt overwrite a human resolution, nor a newer attempt', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const outbox = tools.sql.table('outbox');
    const message = (id: string) => ({ id, subject: 't.inbox.a.b', headers: {}, payload: { id } });
    const sent = async (id: string) => (await tools.sql.query(`select id from ${outbox} where id = ?`, [id])).length;
    const e = effect();
    // Attempt 1 claims the effect and acts; it stalls, its lease runs out and a redelivery escalates.
    await ledger.recordStarted(e);
    const attempt1 = { state: 'started', attempts: 1 } as const;
    expect(await ledger.recordOutcomeWithMessage(e.key, 'uncertain', null, message('escalated'), attempt1)).toBe(
      'recorded',
    );
    // A human says it happened.
    expect(await ledger.recordResolution(e.tenantId, e.key, 'happened', 'ops@acme', { ok: 'human' })).toEqual({
      state: 'succeeded',
      attempts: 1,
    });
    // Attempt 1 comes back with its own outcome: dropped; the human's answer stands and nothing is sent.
    const late = await ledger.recordOutcomeWithMessage(e.key, 'failed', { late: true }, message('late'), attempt1);
    expect(late).toMatchObject({ state: 'succeeded', resolution: 'happened', resolvedBy: 'ops@acme' });
    expect(await ledger.get(e.key)).toMatchObject({ state: 'succeeded', result: { ok: 'human' } });
    expect(await sent('late')).toBe(0);

    // A human retry makes attempt 2; attempt 1's outcome, arriving after, does not end attempt 2.
    const f = effect();
    await ledger.recordStarted(f);
    await ledger.recordOutcome(f.key, 'uncertain', null, attempt1);
    const attempt2 = await ledger.recordResolution(f.tenantId, f.key, 'retry', 'ops@acme');
    expect(attempt2).toEqual({ state: 'started', attempts: 2 });
    expect(await ledger.recordOutcome(f.key, 'succeeded', { from: 1 }, attempt1)).toMatchObject({ state: 'started' });
    expect(await ledger.recordOutcome(f.key, 'succeeded', { from: 2 }, attempt2!)).toBe('recorded');
    expect(await ledger.get(f.key)).toMatchObject({ state: 'succeeded', result: { from: 2 } });
  });

  it('lets exactly one of two writers racing on the same read state win', async () => {
    const outbox = tools.sql.table('outbox');
    for (let round = 0; round < 10; round++) {
      const e = effect();
      await new EffectLedgerRepository(tools.sql).recordStarted(e);
      const read = { state: 'started', attempts: 1 } as const;
      const ids = [`${e.key}:outcome`, `${e.key}:escalation`];
      const results = await Promise.all([
        withServiceTx(tools, (tx) =>
          new EffectLedgerRepository(tx).recordOutcomeWithMessage(e.key, 'succeeded', { ok: true }, msg(ids[0]!), read),
        ),
        withServiceTx(tools, (tx) =>
          new EffectLedgerRepository(tx).recordOutcomeWithMessage(e.key, 'uncertain', null, msg(ids[1]!), read),
        ),
      ]);
      expect(results.filter((r) => r === 'recorded')).toHaveLength(1);
      const loser = results.find((r) => r !== 'recorded');
      const winner = results[0] === 'recorded' ? 'succeeded' : 'uncertain';
      expect(loser).toMatchObject({ state: winner });
      const rows = await tools.sql.query<{ id: string }>(`select id from ${outbox} where id in (?)`, [ids]);
      expect(rows).toHaveLength(1);
    }
    function msg(id: string) {
      return { id, subject: 't.inbox.a.b', headers: {}, payload: { id } };
    }
  });
});

describe('ApiKeyRepository', () => {
  it('stores only the hash and finds live keys by it', async () => {
    const keys = new ApiKeyRepository(gateway.sql);
    const tenantId = newThreadRef().tenantId;
    const { key, secret } = await keys.create({ tenantId, name: 'ci', roles: ['runs:write', 'admin'] });
    expect(secret).toMatch(/^rk_/);
    const stored = await gateway.sql.query<{ key_hash: string }>(
      `select key_hash from ${gateway.sql.table('api_keys')} where id = ?`,
      [key.id],
    );
    expect(stored).toEqual([{ key_hash: hashApiKey(secret) }]);
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(await keys.findByHash(hashApiKey(secret))).toEqual(key);
    expect(key.roles).toEqual(['runs:write', 'admin']);
    expect(await keys.findByHash(hashApiKey(`${secret}x`))).toBeUndefined();

    const noRoles = await keys.create({ tenantId, name: 'viewer', roles: [], secret: `known-${tenantId}` });
    expect(noRoles.key.roles).toEqual([]);
    expect((await keys.findByHash(hashApiKey(`known-${tenantId}`)))?.id).toBe(noRoles.key.id);

    expect(await keys.revoke(key.id)).toBe(true);
    expect(await keys.revoke(key.id)).toBe(false);
    expect(await keys.findByHash(hashApiKey(secret))).toBeUndefined();
    const listed = await keys.listByTenant(tenantId);
    expect(listed.map((k) => k.id).sort()).toEqual([key.id, noRoles.key.id].sort());
    expect(listed.find((k) => k.id === key.id)?.revokedAt).not.toBeNull();
  });

  it('does not find expired keys', async () => {
    const keys = new ApiKeyRepository(gateway.sql);
    const tenantId = newThreadRef().tenantId;
    const expired = await keys.create({ tenantId, name: 'old', roles: ['a'], expiresAt: new Date(Date.now() - 1000) });
    const live = await keys.create({ tenantId, name: 'new', roles: ['a'], expiresAt: new Date(Date.now() + 60_000) });
    expect(await keys.findByHash(hashApiKey(expired.secret))).toBeUndefined();
    expect((await keys.findByHash(hashApiKey(live.secret)))?.id).toBe(live.key.id);
  });
});

describe('runs projection', () => {
  it('upserts runs by id and lists them per thread', async () => {
    const ref = newThreadRef();
    const store = new PgThreadStore<{ s: string }>(orchestrator, (st) => ({
      status: st.s,
      agent: 'helper',
      activeRunId: null,
    }));
    const base = {
      ...ref,
      requestId: 'req-1',
      agent: 'helper',
      agentVersion: 1,
      principalId: 'user-1',
      steps: 0,
      startedAt: null,
      endedAt: null,
      requestDigest: null,
      outcome: null,
    };
    await store.transaction((tx) =>
      tx.saveProjection({ ...ref, version: 1, state: { s: 'running' } }, [
        { ...base, runId: 'run-1', status: 'queued', version: 1 },
        { ...base, runId: 'run-2', requestId: 'req-2', status: 'queued', version: 1 },
      ]),
    );
    await store.transaction((tx) =>
      tx.saveProjection({ ...ref, version: 2, state: { s: 'idle' } }, [
        {
          ...base,
          runId: 'run-1',
          status: 'completed',
          steps: 3,
          startedAt: '2026-11-30T12:00:00.000Z',
          endedAt: '2026-11-30T12:00:05.250Z',
          version: 2,
        },
      ]),
    );
    const runs = await listRuns(orchestrator.sql, ref.tenantId, ref.threadId);
    expect(runs.map((r) => [r.runId, r.status, r.steps, r.startedAt, r.endedAt, r.version])).toEqual([
      ['run-2', 'queued', 0, null, null, 1],
      ['run-1', 'completed', 3, '2026-11-30T12:00:00.000Z', '2026-11-30T12:00:05.250Z', 2],
    ]);
    const thread = await orchestrator.sql.query(
      `select status, agent, active_run_id, version from ${orchestrator.sql.table('threads')} where thread_id = ?`,
      [ref.threadId],
    );
    expect(thread).toEqual([{ status: 'idle', agent: 'helper', active_run_id: null, version: 2 }]);
  });
});
