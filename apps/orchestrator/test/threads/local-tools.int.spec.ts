import { z } from 'zod';
import type { Database } from '@ratchet/adapters';
import type { ModelCallCommand, ThreadEvent } from '@ratchet/contracts';
import { TransientError, threadColumns, type ThreadState, type ThreadTx } from '@ratchet/domain';
import { newThreadRef } from '@ratchet/testing';
import { defineTool, ToolRegistry } from '@ratchet/tools';
import { LocalTools } from '../../src/threads/local-tools';
import type { GroupCommitOptions, ThreadCommandHandler } from '@ratchet/engine';
import {
  answer,
  CheckingPublisher,
  CountingStore,
  handlerOf,
  meta,
  orchestratorDatabase,
  request,
} from './thread-handler.fixtures';

let db: Database;
orchestratorDatabase((opened) => (db = opened));

const quiet = { info: () => undefined, warn: () => undefined };
let runs: string[] = [];
const echo = defineTool({
  name: 'test.echo',
  description: 'Echoes its text',
  kind: 'pure',
  local: true,
  input: z.object({ text: z.string() }),
  async execute({ text }) {
    runs.push(text);
    return { echo: text, token: 'sk-live-0123456789abcdefghijklmn' };
  },
});
const memoryDown = defineTool({
  name: 'test.memory_down',
  description: 'Needs a harness service that does not answer',
  kind: 'pure',
  local: true,
  input: z.object({}),
  async execute() {
    throw new TransientError('memory: no answer', 'memory.unavailable');
  },
});
const notJson = defineTool({
  name: 'test.not_json',
  description: 'Returns nothing',
  kind: 'pure',
  local: true,
  input: z.object({}),
  async execute() {
    return undefined as unknown as { ok: true };
  },
});
const bigInt = defineTool({
  name: 'test.big_int',
  description: 'Returns what JSON cannot hold',
  kind: 'pure',
  local: true,
  input: z.object({}),
  async execute() {
    return { count: 10n } as unknown as { ok: true };
  },
});
const onExecutor = defineTool({
  name: 'test.executor',
  description: 'Pure, but not local',
  kind: 'pure',
  input: z.object({}),
  async execute() {
    return { ok: true };
  },
});

/** Fails the first transaction after its decision (before anything is committed), like a crash before commit. */
class FailOnceStore extends CountingStore {
  failNext = false;
  override transaction<T>(work: (tx: ThreadTx<ThreadState>) => Promise<T>): Promise<T> {
    return super.transaction(async (tx) => {
      const out = await work(tx);
      if (this.failNext) {
        this.failNext = false;
        throw new Error('connection lost before commit');
      }
      return out;
    });
  }
}

function handlerWith(store: CountingStore, publisher: CheckingPublisher, group: GroupCommitOptions = { maxBatch: 1 }) {
  const local = new LocalTools(new ToolRegistry([echo, memoryDown, notJson, bigInt, onExecutor]), quiet);
  return handlerOf(store, publisher, { group, localTools: local });
}

async function events(tenantId: string, threadId: string): Promise<ThreadEvent[]> {
  const rows = await db.sql.query<{ type: string; data: unknown; causation_id: string; version: number }>(
    `select type, data, causation_id, version from ${db.sql.table('thread_events')}
      where tenant_id = ? and thread_id = ? order by version`,
    [tenantId, threadId],
  );
  return rows.map((r) => ({ type: r.type, data: r.data, causationId: r.causation_id, version: r.version }) as never);
}

/** A thread whose run is waiting for the model's first answer. */
async function started(handler: ThreadCommandHandler) {
  const r = newThreadRef();
  const runId = `run-${r.threadId}`;
  await handler.handle('req', `m0-${r.threadId}`, request(r.tenantId, r.threadId, runId), meta(runId));
  return { ...r, runId };
}

beforeEach(() => {
  runs = [];
});

describe('local tools: run inside the decision that calls them (real Postgres)', () => {
  it('commits the calls, their results and the next model call together; nothing goes to the executor', async () => {
    const store = new CountingStore(db, threadColumns);
    const publisher = new CheckingPublisher(db);
    const handler = handlerWith(store, publisher);
    const t = await started(handler);
    const before = store.transactions;
    const calls = [
      { id: 'c1', name: 'test.echo', args: { text: 'one' } },
      { id: 'c2', name: 'test.echo', args: { text: 'two' } },
    ];
    const outcome = await handler.handle(
      'inbox',
      `m1-${t.threadId}`,
      answer(t.tenantId, t.threadId, t.runId, null, calls),
      meta(t.runId),
    );

    expect(outcome.status).toBe('applied');
    expect(store.transactions - before).toBe(1);
    expect(runs).toEqual(['one', 'two']);
    const log = await events(t.tenantId, t.threadId);
    expect(log.map((e) => e.type).slice(4)).toEqual([
      'model.responded',
      'tool.requested',
      'tool.requested',
      'tool.completed',
      'tool.completed',
      'model.requested',
    ]);
    expect(log.map((e) => e.version)).toEqual(log.map((_, i) => i + 1));
    // Each result's events name the result message the executor would have sent (same id).
    const completed = log.filter((e) => e.type === 'tool.completed');
    expect(completed.map((e) => e.causationId)).toEqual([
      expect.stringMatching(/:result:completed$/),
      expect.stringMatching(/:result:completed$/),
    ]);
    // Secret-looking values never reach the log.
    expect(JSON.stringify(completed)).not.toContain('sk-live-0123456789abcdefghijklmn');

    await publisher.settled();
    expect(publisher.uncommitted).toEqual([]);
    expect(publisher.published.filter((m) => m.subject.includes('.cmd.tool.'))).toEqual([]);
    const modelCalls = publisher.published.filter((m) => m.subject.includes('.cmd.model.'));
    const step2 = modelCalls.at(-1)!.payload as ModelCallCommand;
    expect(step2.step).toBe(2);
    expect(step2.messages!.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      expect.stringContaining('"echo":"one"'),
      expect.stringContaining('"echo":"two"'),
    ]);
  });

  it('records nothing of a local call when its transaction fails; decided again, it runs again and is recorded once', async () => {
    const store = new FailOnceStore(db, threadColumns);
    const publisher = new CheckingPublisher(db);
    // Without the cache: a failure on a cached state is decided again at once, this one is left to redelivery.
    const handler = handlerWith(store, publisher, { maxBatch: 1, cachedThreads: 0 });
    const t = await started(handler);
    const message = answer(t.tenantId, t.threadId, t.runId, null, [
      { id: 'c1', name: 'test.echo', args: { text: 'again' } },
    ]);

    store.failNext = true;
    await expect(handler.handle('inbox', `m1-${t.threadId}`, message, meta(t.runId))).rejects.toThrow(
      'connection lost before commit',
    );
    expect(runs).toEqual(['again']);
    expect((await events(t.tenantId, t.threadId)).map((e) => e.type)).not.toContain('tool.requested');

    // The redelivery of the same message.
    const outcome = await handler.handle('inbox', `m1-${t.threadId}`, message, { ...meta(t.runId), delivery: 2 });
    expect(outcome.status).toBe('applied');
    expect(runs).toEqual(['again', 'again']);
    const types = (await events(t.tenantId, t.threadId)).map((e) => e.type);
    expect(types.filter((x) => x === 'tool.requested')).toHaveLength(1);
    expect(types.filter((x) => x === 'tool.completed')).toHaveLength(1);
    expect(types.at(-1)).toBe('model.requested');
    await publisher.settled();
    expect(publisher.uncommitted).toEqual([]);
  });

  it('sends a call to the executor when a harness service it needs does not answer, and non-local tools as before', async () => {
    const publisher = new CheckingPublisher(db);
    const handler = handlerWith(new CountingStore(db, threadColumns), publisher);
    const t = await started(handler);
    await handler.handle(
      'inbox',
      `m1-${t.threadId}`,
      answer(t.tenantId, t.threadId, t.runId, null, [
        { id: 'c1', name: 'test.memory_down', args: {} },
        { id: 'c2', name: 'test.executor', args: {} },
      ]),
      meta(t.runId),
    );
    const types = (await events(t.tenantId, t.threadId)).map((e) => e.type);
    expect(types.slice(4)).toEqual(['model.responded', 'tool.requested', 'tool.requested']);
    await publisher.settled();
    const toExecutor = publisher.published.filter((m) => m.subject.includes('.cmd.tool.'));
    expect(toExecutor.map((m) => (m.payload as { tool: string }).tool).sort()).toEqual([
      'test.executor',
      'test.memory_down',
    ]);
  });

  // A BigInt is what JSON cannot hold: without the check its decision would throw on every delivery.
  it.each([
    ['nothing', 'test.not_json'],
    ['a BigInt', 'test.big_int'],
  ])('turns a result that is not JSON (%s) into a failed call the model can read', async (_what, tool) => {
    const handler = handlerWith(new CountingStore(db, threadColumns), new CheckingPublisher(db));
    const t = await started(handler);
    await handler.handle(
      'inbox',
      `m1-${t.threadId}`,
      answer(t.tenantId, t.threadId, t.runId, null, [{ id: 'c1', name: tool, args: {} }]),
      meta(t.runId),
    );
    const failed = (await events(t.tenantId, t.threadId)).find((e) => e.type === 'tool.failed');
    expect(failed?.data).toMatchObject({
      callId: 'c1',
      error: { code: 'invalid_output', message: `${tool} returned a result that is not JSON` },
    });
  });
});
