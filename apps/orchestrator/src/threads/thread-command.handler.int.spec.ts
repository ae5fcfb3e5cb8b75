import { openServiceDatabase, PgThreadStore, type Database, type PgThreadTx } from '@ratchet/adapters';
import { subjects } from '@ratchet/contracts';
import {
  PoisonMessageError,
  threadColumns,
  type CommittedPublisher,
  type OutboxMessage,
  type RequestRun,
  type ThreadState,
} from '@ratchet/domain';
import { createTestDatabase, newThreadRef, type TestDatabase } from '@ratchet/testing';
import { ThreadCommandHandler } from './thread-command.handler';

let testDb: TestDatabase;
let db: Database;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
});
afterAll(async () => {
  await db.close();
  await testDb.drop();
});

/** Counts transactions and the messages each claimed, so a test can tell grouped commits from single ones. */
class CountingStore extends PgThreadStore<ThreadState> {
  transactions = 0;
  claimed: string[][] = [];
  override transaction<T>(work: (tx: PgThreadTx<ThreadState>) => Promise<T>): Promise<T> {
    this.transactions++;
    return super.transaction((tx) =>
      work({
        ...tx,
        claimAndLoadMany: (items) => {
          this.claimed.push(items.map((i) => i.messageId));
          return tx.claimAndLoadMany(items);
        },
      }),
    );
  }
}

/** Checks, at the moment of publishing, that every row is committed (visible to another connection). */
class CheckingPublisher implements CommittedPublisher {
  published: OutboxMessage[] = [];
  uncommitted: string[] = [];
  async publishCommitted(messages: readonly OutboxMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    const rows = await db.sql.query<{ id: string }>(`select id from ${db.sql.table('outbox')} where id in (?)`, [
      messages.map((m) => m.id),
    ]);
    const seen = new Set(rows.map((r) => r.id));
    this.uncommitted.push(...messages.filter((m) => !seen.has(m.id)).map((m) => m.id));
    this.published.push(...messages);
    return messages.length;
  }
}

function request(tenantId: string, threadId: string, runId: string): RequestRun {
  return {
    type: 'RequestRun',
    tenantId,
    threadId,
    at: new Date().toISOString(),
    runId,
    requestId: `req-${runId}`,
    agent: 'demo',
    agentVersion: 1,
    maxSteps: 5,
    input: [{ role: 'user', content: 'hello' }],
    principal: { id: 'alice', roles: ['runner'] },
    concurrency: 'enqueue',
    metadata: {},
  };
}

const meta = (runId: string) => ({ correlationId: runId });

async function eventTypes(tenantId: string, threadId: string): Promise<string[]> {
  const rows = await db.sql.query<{ type: string }>(
    `select type from ${db.sql.table('thread_events')} where tenant_id = ? and thread_id = ? order by version`,
    [tenantId, threadId],
  );
  return rows.map((r) => r.type);
}

describe('ThreadCommandHandler group commit (real Postgres)', () => {
  it('decides messages of many threads in few transactions, and publishes only what is committed', async () => {
    const store = new CountingStore(db, threadColumns);
    const publisher = new CheckingPublisher();
    const handler = new ThreadCommandHandler(store, publisher, subjects('t'), undefined, undefined, { maxBatch: 16 });
    const refs = Array.from({ length: 24 }, () => newThreadRef());
    const outcomes = await Promise.all(
      refs.map((r, i) =>
        handler.handle('c', `m-${r.threadId}`, request(r.tenantId, r.threadId, `run-${r.threadId}`), meta(`run-${i}`)),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(refs.map(() => 'applied'));
    for (const r of refs) {
      expect(await eventTypes(r.tenantId, r.threadId)).toEqual([
        'thread.created',
        'run.requested',
        'run.started',
        'model.requested',
      ]);
    }
    expect(store.transactions).toBeLessThan(refs.length);
    expect(publisher.uncommitted).toEqual([]);
    // One model-call command per run among the published messages.
    expect(publisher.published.filter((m) => m.subject.includes('.cmd.model.')).length).toBe(refs.length);
  });

  it('one bad message in a group fails alone; the others commit', async () => {
    const store = new CountingStore(db, threadColumns);
    const publisher = new CheckingPublisher();
    const refs = Array.from({ length: 6 }, () => newThreadRef());
    const bad = refs[2]!;
    const handler = new ThreadCommandHandler(
      store,
      publisher,
      subjects('t'),
      async (_state, command) => {
        if (command.threadId === bad.threadId) throw new PoisonMessageError('this one is poison', 'test.poison');
        return command;
      },
      undefined,
      { maxBatch: 16 },
    );
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
    expect(await eventTypes(bad.tenantId, bad.threadId)).toEqual([]);
    // The bad message's inbox claim was rolled back with it: a redelivery is decided afresh.
    const claimed = await db.sql.query(`select 1 from ${db.sql.table('inbox')} where message_id = ?`, [
      `m-${bad.threadId}`,
    ]);
    expect(claimed).toEqual([]);
    for (const r of refs.filter((x) => x !== bad)) expect(await eventTypes(r.tenantId, r.threadId)).toHaveLength(4);
    expect(publisher.uncommitted).toEqual([]);
  });

  it('decides a granted approval (re-checked against other services) in a transaction of its own', async () => {
    const store = new CountingStore(db, threadColumns);
    const handler = new ThreadCommandHandler(store, new CheckingPublisher(), subjects('t'), undefined, undefined, {
      maxBatch: 16,
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
    const handler = new ThreadCommandHandler(
      new CountingStore(db, threadColumns),
      new CheckingPublisher(),
      subjects('t'),
      undefined,
      undefined,
      { maxBatch: 16 },
    );
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
    expect(await eventTypes(r.tenantId, r.threadId)).toEqual([
      'thread.created',
      'run.requested',
      'run.started',
      'model.requested',
      'run.requested',
      'run.queued',
    ]);
  });
});
