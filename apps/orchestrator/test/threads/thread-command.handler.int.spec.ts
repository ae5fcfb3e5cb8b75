import type { Database } from '@ratchet/adapters';
import { PoisonMessageError, threadColumns, type CancelRun, type RecordToolResult } from '@ratchet/domain';
import { newThreadRef } from '@ratchet/testing';
import {
  answer,
  CheckingPublisher,
  CountingStore,
  eventTypes,
  handlerOf,
  meta,
  orchestratorDatabase,
  request,
} from './thread-handler.fixtures';

let db: Database;
orchestratorDatabase((opened) => (db = opened));

describe('ThreadCommandHandler group commit (real Postgres)', () => {
  it('decides messages of many threads in few transactions, and publishes only what is committed', async () => {
    const store = new CountingStore(db, threadColumns);
    const publisher = new CheckingPublisher(db);
    const handler = handlerOf(store, publisher, { group: { maxBatch: 16 } });
    const refs = Array.from({ length: 24 }, () => newThreadRef());
    const outcomes = await Promise.all(
      refs.map((r, i) =>
        handler.handle('c', `m-${r.threadId}`, request(r.tenantId, r.threadId, `run-${r.threadId}`), meta(`run-${i}`)),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(refs.map(() => 'applied'));
    for (const r of refs) {
      expect(await eventTypes(db, r.tenantId, r.threadId)).toEqual([
        'thread.created',
        'run.requested',
        'run.started',
        'model.requested',
      ]);
    }
    expect(store.transactions).toBeLessThan(refs.length);
    await publisher.settled();
    expect(publisher.uncommitted).toEqual([]);
    // One model-call command per run among the published messages.
    expect(publisher.published.filter((m) => m.subject.includes('.cmd.model.')).length).toBe(refs.length);
  });

  it('one bad message in a group fails alone; the others commit', async () => {
    const store = new CountingStore(db, threadColumns);
    const publisher = new CheckingPublisher(db);
    const refs = Array.from({ length: 6 }, () => newThreadRef());
    const bad = refs[2]!;
    const handler = handlerOf(store, publisher, {
      enrich: async (_state, command) => {
        if (command.threadId === bad.threadId) throw new PoisonMessageError('this one is poison', 'test.poison');
        return command;
      },
      group: { maxBatch: 16 },
    });
    const settled = await Promise.allSettled(
      refs.map((r, i) =>
        handler.handle('c', `m-${r.threadId}`, request(r.tenantId, r.threadId, `run-${r.threadId}`), meta(`r${i}`)),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect((settled[2] as PromiseRejectedResult).reason).toBeInstanceOf(PoisonMessageError);
    expect(await eventTypes(db, bad.tenantId, bad.threadId)).toEqual([]);
    // The bad message's inbox claim was rolled back with it: a redelivery is decided afresh.
    const claimed = await db.sql.query(`select 1 from ${db.sql.table('inbox')} where message_id = ?`, [
      `m-${bad.threadId}`,
    ]);
    expect(claimed).toEqual([]);
    for (const r of refs.filter((x) => x !== bad)) expect(await eventTypes(db, r.tenantId, r.threadId)).toHaveLength(4);
    await publisher.settled();
    expect(publisher.uncommitted).toEqual([]);
  });

  it('decides a granted approval (re-checked against other services) in a transaction of its own', async () => {
    const store = new CountingStore(db, threadColumns);
    const handler = handlerOf(store, new CheckingPublisher(db), {
      group: {
        maxBatch: 16,
      },
    });
    const refs = Array.from({ length: 6 }, () => newThreadRef());
    const approval = newThreadRef();
    await Promise.all([
      ...refs.map((r) =>
        handler.handle('c', `m-${r.threadId}`, request(r.tenantId, r.threadId, `run-${r.threadId}`), meta('x')),
      ),
      handler.handle(
        'c',
        `m-${approval.threadId}`,
        {
          type: 'RecordApprovalDecision',
          tenantId: approval.tenantId,
          threadId: approval.threadId,
          at: new Date().toISOString(),
          runId: 'run-none',
          callId: 'call-none',
          approvalId: 'appr-none',
          decision: 'granted',
          by: 'bob',
          reason: '',
        },
        meta('x'),
      ),
    ]);
    const withApproval = store.claimed.filter((ids) => ids.includes(`m-${approval.threadId}`));
    expect(withApproval).toEqual([[`m-${approval.threadId}`]]);
    expect(store.claimed.some((ids) => ids.length > 1)).toBe(true); // the others were grouped
  });

  it('keeps one thread’s messages in order and a repeated message id a duplicate', async () => {
    const handler = handlerOf(new CountingStore(db, threadColumns), new CheckingPublisher(db), {
      group: { maxBatch: 16 },
    });
    const r = newThreadRef();
    const other = newThreadRef();
    const [a, b, c] = [`a-${r.threadId}`, `b-${r.threadId}`, `c-${other.threadId}`];
    const [first, second, again, elsewhere] = await Promise.all([
      handler.handle('c', `m1-${a}`, request(r.tenantId, r.threadId, a), meta(a)),
      handler.handle('c', `m2-${b}`, request(r.tenantId, r.threadId, b), meta(b)),
      handler.handle('c', `m1-${a}`, request(r.tenantId, r.threadId, a), meta(a)),
      handler.handle('c', `m3-${c}`, request(other.tenantId, other.threadId, c), meta(c)),
    ]);
    expect([first?.status, second?.status, again?.status, elsewhere?.status]).toEqual([
      'applied',
      'applied',
      'duplicate',
      'applied',
    ]);
    // The second request was decided after the first: it waits in the queue behind the active run.
    expect(await eventTypes(db, r.tenantId, r.threadId)).toEqual([
      'thread.created',
      'run.requested',
      'run.started',
      'model.requested',
      'run.requested',
      'run.queued',
    ]);
  });
});

describe('ThreadCommandHandler over a bounded projection (real Postgres)', () => {
  const modelCalls = (p: CheckingPublisher) =>
    p.published.filter((m) => m.subject.includes('.cmd.model.')).map((m) => m.payload as { messages: unknown[] });

  for (const maxBatch of [1, 16]) {
    it(`ignores a request retried after its run ended, from the runs rows (maxBatch ${maxBatch})`, async () => {
      const handler = handlerOf(new CountingStore(db, threadColumns), new CheckingPublisher(db), {
        group: { maxBatch },
      });
      const r = newThreadRef();
      const run = `run-${r.threadId}`;
      await handler.handle('c', `m1-${run}`, request(r.tenantId, r.threadId, run), meta(run));
      await handler.handle('c', `m2-${run}`, answer(r.tenantId, r.threadId, run, 'done'), meta(run));
      const before = await eventTypes(db, r.tenantId, r.threadId);
      expect(before.at(-1)).toBe('run.completed');
      // The same request id under a new message id and run id: the state no longer holds the run.
      const again = { ...request(r.tenantId, r.threadId, `other-${run}`), requestId: `req-${run}` };
      const [outcome, other] = await Promise.all([
        handler.handle('c', `m3-${run}`, again, meta(run)),
        // Grouped with a request of another thread, which starts as usual.
        (async () => {
          const o = newThreadRef();
          return handler.handle('c', `m-${o.threadId}`, request(o.tenantId, o.threadId, `run-${o.threadId}`), meta(''));
        })(),
      ]);
      expect(outcome.status).toBe('no-op');
      expect(other.status).toBe('applied');
      expect(await eventTypes(db, r.tenantId, r.threadId)).toEqual(before);
    });
  }

  it('sends the model the whole conversation (stored messages + the decision’s own); stores a bounded state', async () => {
    const publisher = new CheckingPublisher(db);
    const store = new CountingStore(db, threadColumns);
    const handler = handlerOf(store, publisher, { group: { maxBatch: 16 } });
    const r = newThreadRef();
    const [r1, r2] = [`run1-${r.threadId}`, `run2-${r.threadId}`];
    await handler.handle('c', `m1-${r1}`, request(r.tenantId, r.threadId, r1), meta(r1));
    await handler.handle('c', `m2-${r1}`, answer(r.tenantId, r.threadId, r1, 'first answer'), meta(r1));
    const second = { ...request(r.tenantId, r.threadId, r2), input: [{ role: 'user' as const, content: 'and now?' }] };
    await handler.handle('c', `m1-${r2}`, second, meta(r2));
    const calls = modelCalls(publisher);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(calls[1]!.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'first answer', toolCalls: [] },
      { role: 'user', content: 'and now?' },
    ]);
    const stored = await store.readProjection(r.tenantId, r.threadId);
    expect(stored?.state).toMatchObject({ messages: 3, lastAssistant: null, active: { runId: r2 } });
    expect(stored?.state).not.toHaveProperty('transcript');
    expect(stored?.state).not.toHaveProperty('runs');
    expect(await store.readMessages(r.tenantId, r.threadId)).toEqual(calls[1]!.messages);
  });
});

describe('ThreadCommandHandler on the threads it committed last (real Postgres)', () => {
  const cancel = (tenantId: string, threadId: string, runId: string): CancelRun => ({
    type: 'CancelRun',
    tenantId,
    threadId,
    at: new Date().toISOString(),
    runId,
    reason: 'test',
    by: 'alice',
  });
  const versions = async (tenantId: string, threadId: string) =>
    (
      await db.sql.query<{ version: number }>(
        `select version from ${db.sql.table('thread_events')} where tenant_id = ? and thread_id = ? order by version`,
        [tenantId, threadId],
      )
    ).map((r) => r.version);

  for (const maxBatch of [1, 16]) {
    it(`decides the next message without reading the thread; a repeated message is still a duplicate (maxBatch ${maxBatch})`, async () => {
      const store = new CountingStore(db, threadColumns);
      const handler = handlerOf(store, new CheckingPublisher(db), {
        group: {
          maxBatch,
        },
      });
      const r = newThreadRef();
      const run = `run-${r.threadId}`;
      await handler.handle('c', `m1-${run}`, request(r.tenantId, r.threadId, run), meta(run));
      expect((await handler.handle('c', `m2-${run}`, answer(r.tenantId, r.threadId, run), meta(run))).status).toBe(
        'applied',
      );
      // Only the request read the thread (its claim-and-load); the answer was decided on the cached state.
      expect(store.claimed).toEqual([[`m1-${run}`]]);
      expect((await eventTypes(db, r.tenantId, r.threadId)).at(-1)).toBe('run.completed');
      // The same message again: its claim fails with the write, the thread is read, and it is a duplicate.
      expect((await handler.handle('c', `m2-${run}`, answer(r.tenantId, r.threadId, run), meta(run))).status).toBe(
        'duplicate',
      );
      expect(store.claimed.at(-1)).toEqual([`m2-${run}`]);
    });
  }

  it('never drops a message its stale state would ignore: the thread moved on elsewhere, it is read again', async () => {
    const a = handlerOf(new CountingStore(db, threadColumns), new CheckingPublisher(db));
    const b = handlerOf(new CountingStore(db, threadColumns), new CheckingPublisher(db));
    const r = newThreadRef();
    const run = `run-${r.threadId}`;
    await a.handle('c', `m1-${run}`, request(r.tenantId, r.threadId, run), meta(run));
    // B (another process) records the model's answer: one tool call. A still has the run waiting for its model.
    const calls = answer(r.tenantId, r.threadId, run, null, [
      { id: 'call_1', name: 'demo.weather', args: { city: 'Oslo' } },
    ]);
    await b.handle('c', `m2-${run}`, calls, meta(run));
    // The call's result reaches A. On A's cached state it is a result for a call never asked for (nothing to
    // write, only the claim): the version guard fails that commit and A decides it from the database.
    const result: RecordToolResult = {
      type: 'RecordToolResult',
      tenantId: r.tenantId,
      threadId: r.threadId,
      at: new Date().toISOString(),
      runId: run,
      step: 1,
      callId: 'call_1',
      outcome: { status: 'completed', result: { forecast: 'sunny' } },
    };
    expect((await a.handle('c', `m3-${run}`, result, meta(run))).status).toBe('applied');
    const types = await eventTypes(db, r.tenantId, r.threadId);
    expect(types.slice(-2)).toEqual(['tool.completed', 'model.requested']);
    const vs = await versions(r.tenantId, r.threadId);
    expect(vs).toEqual(vs.map((_, i) => i + 1));
  });

  it('decides again from the database when another process moved the thread since (no stale decision)', async () => {
    const a = handlerOf(new CountingStore(db, threadColumns), new CheckingPublisher(db));
    const b = handlerOf(new CountingStore(db, threadColumns), new CheckingPublisher(db));
    const r = newThreadRef();
    const run = `run-${r.threadId}`;
    // A starts the run and keeps the thread cached with the run waiting for its model.
    await a.handle('c', `m1-${run}`, request(r.tenantId, r.threadId, run), meta(run));
    // B (another process) completes it.
    await b.handle('c', `m2-${run}`, answer(r.tenantId, r.threadId, run), meta(run));
    const before = await eventTypes(db, r.tenantId, r.threadId);
    expect(before.at(-1)).toBe('run.completed');
    // On A's stale state the run is still active and a cancel would end it; from the database it is over.
    const outcome = await a.handle('c', `m3-${run}`, cancel(r.tenantId, r.threadId, run), meta(run));
    expect(outcome.status).toBe('no-op');
    expect(await eventTypes(db, r.tenantId, r.threadId)).toEqual(before);
    // A moved on too: its next decision on the thread continues the log without a gap.
    const next = `run2-${r.threadId}`;
    await a.handle('c', `m4-${next}`, request(r.tenantId, r.threadId, next), meta(next));
    const vs = await versions(r.tenantId, r.threadId);
    expect(vs).toEqual(vs.map((_, i) => i + 1));
    expect((await eventTypes(db, r.tenantId, r.threadId)).at(-1)).toBe('model.requested');
  });
});
