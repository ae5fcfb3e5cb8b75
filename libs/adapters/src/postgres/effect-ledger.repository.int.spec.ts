import { createTestDatabase, newThreadRef, type TestDatabase } from '@ratchet/testing';
import { EffectLedgerRepository } from './effect-ledger.repository';
import type { StartEffect } from './effect-ledger.records';
import type { Database } from './orm';
import { openServiceDatabase } from './service-database';

let testDb: TestDatabase;
let tools: Database;
beforeAll(async () => {
  testDb = await createTestDatabase();
  tools = await openServiceDatabase(testDb.url, 'tools');
});
afterAll(async () => {
  await tools?.close();
  await testDb?.drop();
});

const pureCall = (): StartEffect => {
  const ref = newThreadRef();
  return {
    key: `key-${ref.threadId}`,
    ...ref,
    runId: 'run-1',
    callId: 'call-1',
    tool: 'demo.weather',
    kind: 'pure',
    command: { kind: 'tool.call', args: { city: "it's ?" } },
    traceparent: `00-${'1'.repeat(32)}-${'a'.repeat(16)}-01`,
  };
};
const message = (id: string, payload: unknown = { ok: "it's ?" }) => ({
  id,
  subject: 't.inbox.a.b',
  headers: { k: "v '?" },
  payload,
});

async function outboxRows(ids: string[]) {
  return tools.sql.query<{ id: string; payload: unknown }>(
    `select id, payload from ${tools.sql.table('outbox')} where id in (?) order by id`,
    [ids],
  );
}

describe('EffectLedgerRepository: pure calls (no `started` row)', () => {
  it('records a pure call that was never started: the finished row and its result message in one statement', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const e = pureCall();
    // Nothing before the tool ran.
    expect(await ledger.get(e.key)).toBeUndefined();
    // One statement (autocommit on the pool): the finished row and the message together.
    expect(await ledger.recordPureOutcome(e, 'succeeded', { forecast: 'sunny' }, message(`${e.key}:result`))).toBe(
      'recorded',
    );
    const row = await ledger.get(e.key);
    expect(row).toMatchObject({
      key: e.key,
      tenantId: e.tenantId,
      threadId: e.threadId,
      kind: 'pure',
      state: 'succeeded',
      attempts: 1,
      dedupHits: 0,
      result: { forecast: 'sunny' },
      command: e.command,
      traceparent: e.traceparent,
    });
    expect(row!.finishedAt).not.toBeNull();
    expect(await outboxRows([`${e.key}:result`])).toEqual([{ id: `${e.key}:result`, payload: { ok: "it's ?" } }]);
  });

  it('a second delivery that ran the call again finds the stored outcome: nothing changes, no second message', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const e = pureCall();
    await ledger.recordPureOutcome(e, 'succeeded', { n: 1 }, message(`${e.key}:result`, { n: 1 }));
    const again = await ledger.recordPureOutcome(
      { ...e, traceparent: `00-${'2'.repeat(32)}-${'b'.repeat(16)}-01` },
      'failed',
      { n: 2 },
      message(`${e.key}:result:2`, { n: 2 }),
    );
    // The row that was there: the caller re-sends its result.
    expect(again).toMatchObject({ state: 'succeeded', attempts: 1, result: { n: 1 }, traceparent: e.traceparent });
    expect(await ledger.get(e.key)).toMatchObject({ state: 'succeeded', attempts: 1, result: { n: 1 } });
    expect(await outboxRows([`${e.key}:result`, `${e.key}:result:2`])).toEqual([
      { id: `${e.key}:result`, payload: { n: 1 } },
    ]);
  });

  it('finishes a row an earlier attempt left `started`, counting the attempt', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const e = pureCall();
    expect(await ledger.recordStarted(e)).toBe('inserted');
    const second = `00-${'3'.repeat(32)}-${'c'.repeat(16)}-01`;
    expect(
      await ledger.recordPureOutcome({ ...e, traceparent: second }, 'failed', { code: 'x' }, message(`${e.key}:r`)),
    ).toBe('recorded');
    expect(await ledger.get(e.key)).toMatchObject({
      state: 'failed',
      attempts: 2,
      result: { code: 'x' },
      traceparent: second,
    });
    expect(await outboxRows([`${e.key}:r`])).toHaveLength(1);
  });

  it("never touches another tenant's row with the same key, and enqueues nothing", async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const e = pureCall();
    expect(await ledger.recordStarted(e)).toBe('inserted');
    const forged = { ...e, tenantId: `${e.tenantId}-other` };
    const found = await ledger.recordPureOutcome(forged, 'succeeded', { stolen: true }, message(`${e.key}:forged`));
    expect(found).toMatchObject({ tenantId: e.tenantId, state: 'started', attempts: 1, result: null });
    expect(await outboxRows([`${e.key}:forged`])).toEqual([]);
  });

  it('a bad state fails the whole statement: no row, no message', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const e = pureCall();
    await expect(ledger.recordPureOutcome(e, 'exploded' as 'failed', null, message(`${e.key}:result`))).rejects.toThrow(
      /check/,
    );
    expect(await ledger.get(e.key)).toBeUndefined();
    expect(await outboxRows([`${e.key}:result`])).toEqual([]);
  });

  it('of two concurrent deliveries recording the same pure call, one records; the other gets its row', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const e = pureCall();
    const results = await Promise.all(
      [1, 2].map((n) => ledger.recordPureOutcome(e, 'succeeded', { n }, message(`${e.key}:result:${n}`, { n }))),
    );
    expect(results.filter((r) => r === 'recorded')).toHaveLength(1);
    const other = results.find((r) => r !== 'recorded');
    const row = await ledger.get(e.key);
    expect(other).toMatchObject({ state: 'succeeded', attempts: 1, result: row!.result });
    expect(await outboxRows([`${e.key}:result:1`, `${e.key}:result:2`])).toHaveLength(1);
  });
});

describe('EffectLedgerRepository: outcomes mark published rows sent', () => {
  const sentAt = async (ids: string[]) =>
    (
      await tools.sql.query<{ id: string; sent: boolean }>(
        `select id, sent_at is not null as sent from ${tools.sql.table('outbox')} where id in (?) order by id`,
        [ids],
      )
    ).reduce<Record<string, boolean>>((byId, r) => ({ ...byId, [r.id]: r.sent }), {});

  it('marks the rows it is given with the statement that records an outcome, whether or not the outcome is recorded', async () => {
    const ledger = new EffectLedgerRepository(tools.sql);
    const first = pureCall();
    const second = pureCall();
    await ledger.recordPureOutcome(first, 'succeeded', { n: 1 }, message(`${first.key}:result`));
    // The second outcome's statement marks the first's result row (published meanwhile).
    await ledger.recordPureOutcome(second, 'succeeded', { n: 2 }, message(`${second.key}:result`), [
      `${first.key}:result`,
    ]);
    expect(await sentAt([`${first.key}:result`, `${second.key}:result`])).toEqual({
      [`${first.key}:result`]: true,
      [`${second.key}:result`]: false,
    });
    // A claimed call whose row moved on: nothing recorded, the marks still made.
    const claimed = { ...pureCall(), kind: 'idempotent' as const };
    expect(await ledger.recordStarted(claimed)).toBe('inserted');
    const moved = await ledger.recordOutcomeWithMessage(
      claimed.key,
      'succeeded',
      { n: 3 },
      message(`${claimed.key}:result`),
      { state: 'started', attempts: 2 },
      [`${second.key}:result`],
    );
    expect(moved).toMatchObject({ key: claimed.key, state: 'started', attempts: 1 });
    expect(await sentAt([`${second.key}:result`])).toEqual({ [`${second.key}:result`]: true });
  });
});
