import { ContentSealedError, type KeyWrapper, type OutboxMessage, type ThreadTx } from '@ratchet/domain';
import {
  contractColumns,
  createTestDatabase,
  demoRunEvents,
  testMasterKey,
  threadStoreContract,
  type ContractState,
  type TestDatabase,
} from '@ratchet/testing';
import { feedDecisionPayloads, isSealed, subjects, type ChatMessage, type ThreadEvent } from '@ratchet/contracts';
import { openServiceDatabase, type Database } from './';
import { removeThreadEverywhere } from './erasure.queries';
import { PgOutboxStore } from './pg-outbox.store';
import { PgThreadStore } from './pg-thread-store';

let testDb: TestDatabase;
const master = testMasterKey();
const opened: Database[] = [];
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(opened.map((db) => db.close()));
  await testDb.drop();
});

async function open(masterKey: KeyWrapper | undefined = master): Promise<Database> {
  const db = await openServiceDatabase(testDb.url, 'orchestrator', 4, masterKey);
  opened.push(db);
  return db;
}

// Everything a thread store promises holds with its content sealed too.
threadStoreContract('postgres, content sealed', async () => {
  const db = await openServiceDatabase(testDb.url, 'orchestrator', 4, master);
  await db.sql.run(`truncate ${db.sql.table('outbox')}, ${db.sql.table('inbox')}`);
  return {
    store: new PgThreadStore<ContractState>(db, contractColumns),
    outbox: new PgOutboxStore(db),
    close: () => db.close(),
  };
});

const CANARY = 'canary-7f3a9c';
let n = 0;
/** The demo run's log with a canary in every piece of content, on a thread of its own. */
function threadWithContent(): { tenantId: string; threadId: string; events: ThreadEvent[]; messages: ChatMessage[] } {
  n += 1;
  const tenantId = `t-seal-${n}`;
  const threadId = `th_seal_${n}_${Date.now().toString(36)}`;
  const events = demoRunEvents(tenantId, threadId).map((e) => JSON.parse(JSON.stringify(e).replaceAll('Oslo', CANARY)));
  const messages: ChatMessage[] = [
    { role: 'user', content: `weather in ${CANARY}?` },
    { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'demo.weather', args: { city: CANARY } }] },
    { role: 'tool', toolCallId: 'call_1', name: 'demo.weather', content: `{"city":"${CANARY}"}`, isError: false },
  ];
  return { tenantId, threadId, events, messages };
}

/** The thread's feed message (v2: the decision's events), as the engine makes it. */
const feed = (events: readonly ThreadEvent[]): OutboxMessage[] =>
  feedDecisionPayloads(events).map(({ id, payload }) => ({
    id,
    subject: subjects('ratchet').feed(payload.tenantId, payload.threadId),
    payload,
    headers: {},
    sealAs: 'decision',
  }));

async function write(db: Database, t: ReturnType<typeof threadWithContent>): Promise<void> {
  const store = new PgThreadStore<ContractState>(db, contractColumns);
  await store.transaction(async (tx: ThreadTx<ContractState>) => {
    await tx.appendEvents(t.tenantId, t.threadId, 0, t.events);
    await tx.saveProjection(
      {
        tenantId: t.tenantId,
        threadId: t.threadId,
        version: t.events.length,
        state: { status: 'idle', agent: null, activeRunId: null, count: 0, note: '' },
      },
      [],
      { from: 1, messages: t.messages },
    );
    await tx.enqueue(feed(t.events));
  });
}

async function rawRows(db: Database, t: { tenantId: string; threadId: string }) {
  const events = await db.sql.query<{ id: string; type: string; data: unknown }>(
    `select id, type, data from ${db.sql.table('thread_events')} where tenant_id = ? and thread_id = ? order by version`,
    [t.tenantId, t.threadId],
  );
  const messages = await db.sql.query<{ message: unknown }>(
    `select message from ${db.sql.table('thread_messages')} where tenant_id = ? and thread_id = ? order by seq`,
    [t.tenantId, t.threadId],
  );
  const rows = await db.sql.query<{ payload: { events: { id: string; data: unknown }[] } }>(
    `select payload from ${db.sql.table('outbox')} where id = ?`,
    [`decision:${events[0]!.id}`],
  );
  const feed = rows.flatMap((r) => r.payload.events);
  return { events, messages, feed };
}

describe('content at rest (ADR 0034)', () => {
  it('given a master key, when a thread is written, then its content is sealed in the log, the conversation and the feed, and reads back as written', async () => {
    const db = await open();
    const t = threadWithContent();
    await write(db, t);

    const raw = await rawRows(db, t);
    expect(JSON.stringify(raw)).not.toContain(CANARY);
    const requested = raw.events.find((e) => e.type === 'tool.requested')!;
    expect(isSealed((requested.data as { args: unknown }).args)).toBe(true);
    expect((requested.data as { tool: string }).tool).toBe('demo.weather');
    // The feed's message carries each event as its row is, the same ciphertext.
    for (const e of raw.events) expect(raw.feed.find((f) => f.id === e.id)?.data).toEqual(e.data);

    const store = new PgThreadStore<ContractState>(await open(), contractColumns);
    expect(await store.readEvents(t.tenantId, t.threadId)).toEqual(t.events);
    expect(await store.readMessages(t.tenantId, t.threadId)).toEqual(t.messages);
  });

  it('given a thread erased, when an old copy of its log is read, then its content is gone and its shape is left', async () => {
    const db = await open();
    const t = threadWithContent();
    await write(db, t);
    const copy = await rawRows(db, t);

    const removed = await removeThreadEverywhere(db.sql, t.tenantId, t.threadId, 'destroy');
    expect(removed['orchestrator.thread_keys']).toBe(1);

    // Another process (its key cache empty): a backup restored, an export read elsewhere.
    const reader = await open();
    const asRead = await reader.content.openEvents(copy.events, 'erased');
    expect(JSON.stringify(asRead)).not.toContain(CANARY);
    expect(asRead.map((e) => e.type)).toEqual(t.events.map((e) => e.type));
    const call = asRead.find((e) => e.type === 'tool.requested')!.data as { tool: string; args: unknown };
    expect(call).toMatchObject({ tool: 'demo.weather', args: {} });
    await expect(reader.content.openEvents(copy.events, 'throw')).rejects.toBeInstanceOf(ContentSealedError);
    await expect(reader.content.openEvents(copy.events, 'throw')).rejects.toMatchObject({ absence: 'unknown' });
  });

  it('given no master key, when a thread is written, then it is stored in clear, and sealed content read there is refused as unconfigured', async () => {
    const clearDb = await openServiceDatabase(testDb.url, 'orchestrator', 4);
    opened.push(clearDb);
    const t = threadWithContent();
    await write(clearDb, t);
    expect(JSON.stringify((await rawRows(clearDb, t)).events)).toContain(CANARY);

    const sealedThread = threadWithContent();
    await write(await open(), sealedThread);
    const store = new PgThreadStore<ContractState>(clearDb, contractColumns);
    await expect(store.readEvents(sealedThread.tenantId, sealedThread.threadId)).rejects.toMatchObject({
      code: 'content.sealed',
      absence: 'unconfigured',
    });
  });
});
