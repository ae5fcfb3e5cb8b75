import type { ThreadEvent } from '@ratchet/contracts';
import {
  decide,
  foldRecord,
  modelCommandId,
  recordFrom,
  snapshotStateOf,
  threadColumns,
  type ThreadCommand,
  type ThreadRecord,
  type ThreadState,
} from '@ratchet/domain';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import { openDatabase, type Database } from '../../orm';
import { PgThreadStore } from '../../pg-thread-store';
import { ORCHESTRATOR_MIGRATIONS } from '../index';
import { Migration20270201000000_orchestrator_thread_messages as ThreadMessages } from './Migration20270201000000_thread_messages';

/*
 * The projections of threads written before ADR 0007 (the whole transcript and every run summary inside
 * `threads.state`) are converted by the migration to what a fold of their log gives now: a bounded
 * state and one `thread_messages` row per message.
 */
const TENANT = 'acme';
const AT = '2026-11-30T10:00:00.000Z';
const SCHEMA = 'orchestrator_legacy';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await testDb.drop();
});

/** A thread's log, driven through the decider: a finished run, then a second one mid-step. */
function history(threadId: string, finishSecond: boolean): { events: ThreadEvent[]; record: ThreadRecord } {
  let record = recordFrom();
  const events: ThreadEvent[] = [];
  const apply = (command: ThreadCommand) => {
    const batch = decide(record.state, command).events.map(
      (e, i) =>
        ({
          id: `ev_${threadId}_${events.length + i + 1}`,
          v: 1,
          tenantId: TENANT,
          threadId,
          version: events.length + i + 1,
          at: AT,
          causationId: 'test',
          correlationId: 'test',
          ...e,
        }) as ThreadEvent,
    );
    events.push(...batch);
    record = foldRecord(record, batch);
  };
  const base = { tenantId: TENANT, threadId, at: AT };
  const request = (runId: string, content: string): ThreadCommand => ({
    ...base,
    type: 'RequestRun',
    runId,
    requestId: `req-${runId}`,
    agent: 'demo',
    agentVersion: 1,
    maxSteps: 5,
    input: [{ role: 'user', content }],
    principal: { id: 'alice', roles: [] },
    concurrency: 'enqueue',
    metadata: {},
  });
  const answer = (runId: string, step: number, content: string | null, calls: string[]): ThreadCommand => ({
    ...base,
    type: 'RecordModelResult',
    runId,
    step,
    commandId: modelCommandId(runId, step, 1),
    outcome: {
      status: 'ok',
      content,
      toolCalls: calls.map((id) => ({ id, name: 'demo.weather', args: { city: id } })),
      usage: { inputTokens: 1, outputTokens: 1 },
      model: 'm',
    },
  });
  const r1 = `r1-${threadId}`;
  const r2 = `r2-${threadId}`;
  apply(request(r1, 'first'));
  apply(answer(r1, 1, null, ['a']));
  apply({
    ...base,
    type: 'RecordToolResult',
    runId: r1,
    step: 1,
    callId: 'a',
    outcome: { status: 'completed', result: { z: 1, a: 2 } },
  });
  apply(answer(r1, 2, 'sunny', []));
  apply(request(r2, 'second'));
  apply(answer(r2, 1, null, ['b', 'c']));
  if (finishSecond) {
    for (const callId of ['b', 'c']) {
      apply({
        ...base,
        type: 'RecordToolResult',
        runId: r2,
        step: 1,
        callId,
        outcome: { status: 'completed', result: 1 },
      });
    }
    apply(answer(r2, 2, 'done', []));
  }
  return { events, record };
}

/** The projection state as it was stored before ADR 0007. */
function legacyState(record: ThreadRecord): unknown {
  const { messages: _m, lastAssistant: _l, ...rest } = snapshotStateOf(record);
  if (!rest.active) return rest;
  const { startedAt: _s, answered: _a, ...active } = rest.active;
  return { ...rest, active };
}

async function open(migrations: typeof ORCHESTRATOR_MIGRATIONS): Promise<Database> {
  return openDatabase({ url: testDb.url, schema: SCHEMA, migrations, poolMax: 2 });
}

it('converts stored projections exactly: bounded state, one message row per transcript entry', async () => {
  const before = await open(ORCHESTRATOR_MIGRATIONS.slice(0, ORCHESTRATOR_MIGRATIONS.indexOf(ThreadMessages)));
  const threads = [
    { threadId: 'th-running', ...history('th-running', false) },
    { threadId: 'th-finished', ...history('th-finished', true) },
  ];
  try {
    await before.migrate();
    // Written as that release wrote them (today's store writes tables this schema does not have yet).
    for (const t of threads) {
      for (const e of t.events) {
        await before.sql.run(
          `insert into ${before.sql.table('thread_events')}
             (tenant_id, thread_id, version, id, type, v, run_id, at, causation_id, correlation_id, trace, data)
           values (?, ?, ?, ?, ?, ?, ?, ?::timestamptz, ?, ?, ?::jsonb, ?::jsonb)`,
          [
            TENANT,
            t.threadId,
            e.version,
            e.id,
            e.type,
            e.v,
            e.runId ?? null,
            e.at,
            e.causationId,
            e.correlationId,
            e.trace ? JSON.stringify(e.trace) : null,
            JSON.stringify(e.data),
          ],
        );
      }
      const c = threadColumns(t.record.state);
      await before.sql.run(
        `insert into ${before.sql.table('threads')} (tenant_id, thread_id, version, status, agent, active_run_id, state)
         values (?, ?, ?, ?, ?, ?, ?::jsonb)`,
        [TENANT, t.threadId, t.events.length, c.status, c.agent, c.activeRunId, JSON.stringify(legacyState(t.record))],
      );
    }
  } finally {
    await before.close();
  }

  const after = await open(ORCHESTRATOR_MIGRATIONS);
  try {
    expect(await after.migrate()).toContain(ThreadMessages.name);
    const store = new PgThreadStore<ThreadState>(after, threadColumns);
    for (const t of threads) {
      const row = await store.readProjection(TENANT, t.threadId);
      // jsonb drops undefined members: compare as stored.
      expect(row?.state).toEqual(JSON.parse(JSON.stringify(t.record.state)));
      expect(await store.readMessages(TENANT, t.threadId)).toEqual(JSON.parse(JSON.stringify(t.record.transcript)));
    }
    expect(threads[0]!.record.state.active?.answered).toBe(1);
    expect(threads[1]!.record.state.lastAssistant).toEqual({ content: 'done' });
  } finally {
    await after.close();
  }
});
