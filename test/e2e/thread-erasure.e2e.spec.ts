import path from 'node:path';
import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

/*
 * DELETE /v1/threads/{id} through the gateway, against the orchestrator, tool executor and memory as
 * processes: an idle thread is removed from every store (every table of every schema is searched for
 * its id afterwards) and from the EVENTS stream, a tombstone is left, a repeat answers as done, and a
 * thread with a run going is refused with 409 and keeps everything.
 */

const KEY = 'rk_e2e_thread_erasure_bootstrap_key';
const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/erasure');
const SCHEMAS = ['orchestrator', 'tools', 'approvals', 'memory', 'gateway'];
const alice = { id: 'alice', roles: ['runner'] };

describe('erasing a thread over the API', () => {
  let stack: TestStack;
  let base: string;
  const auth = { authorization: `Bearer ${KEY}` };

  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('tool-executor'),
      stack.start('memory'),
    ]);
    const gateway = await stack.start('gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: TENANT });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const erase = (threadId: string) => fetch(`${base}/v1/threads/${threadId}`, { method: 'DELETE', headers: auth });

  /** Rows of every table of every service schema whose text holds `needle`, as `schema.table: n`. */
  async function rowsHolding(needle: string): Promise<Record<string, number>> {
    const sql = stack.orchestratorDb.sql;
    const tables = await sql.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables
        where table_schema in (?) and table_type = 'BASE TABLE'`,
      [SCHEMAS],
    );
    const found: Record<string, number> = {};
    for (const { s, t } of tables) {
      const [row] = await sql.query<{ n: number }>(
        `select count(*)::int as n from "${s}"."${t}" x where strpos(x::text, ?) > 0`,
        [needle],
      );
      if ((row?.n ?? 0) > 0) found[`${s}.${t}`] = row!.n;
    }
    return found;
  }

  async function streamMessages(threadId: string): Promise<number> {
    const jsm = await stack.nc.jetstreamManager();
    const subject = `${stack.prefix.subject}.events.${TENANT}.${threadId}`;
    const stream = await jsm.streams.find(subject);
    const info = await jsm.streams.info(stream, { subjects_filter: subject });
    return Object.values(info.state.subjects ?? {}).reduce((n, c) => n + c, 0);
  }

  it('removes an idle thread from every store and the EVENTS stream, leaves a tombstone, and answers a repeat as done', async () => {
    await stack.publishRequest(TENANT, {
      requestId: 'erase-me',
      agent: 'memo-saver',
      input: [{ role: 'user', content: 'My favourite drink is green tea' }],
      principal: alice,
    });
    const threadId = threadIdFor(TENANT, 'erase-me');
    await stack.waitFor(TENANT, threadId, terminal(runIdFor(TENANT, 'erase-me')));
    // Before: the thread is in the log, the projection, the runs, memory (the item its run saved) and the stream.
    const before = await rowsHolding(threadId);
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining([
        'orchestrator.thread_events',
        'orchestrator.threads',
        'orchestrator.runs',
        'memory.items',
      ]),
    );
    expect(await streamMessages(threadId)).toBeGreaterThan(0);

    const res = await erase(threadId);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { threadId: string; erased: boolean; removed: Record<string, number> };
    expect(body).toMatchObject({
      threadId,
      erased: true,
      removed: {
        'orchestrator.thread_events': expect.any(Number),
        'orchestrator.threads': 1,
        'orchestrator.runs': 1,
        'memory.items': 1,
      },
    });
    expect(Object.keys(body.removed).some((k) => k.startsWith('nats.'))).toBe(true);

    // After: nothing anywhere holds the thread's id, and the stream has nothing of it.
    expect(await rowsHolding(threadId)).toEqual({});
    expect(await streamMessages(threadId)).toBe(0);
    expect((await fetch(`${base}/v1/threads/${threadId}`, { headers: auth })).status).toBe(404);
    // The tombstone: who and how much, never which thread.
    const tombstones = await stack.orchestratorDb.sql.query<{ operator: string; counts: Record<string, number> }>(
      `select operator, counts from ${stack.orchestratorDb.sql.table('erasures')} where tenant_id = ?`,
      [TENANT],
    );
    expect(tombstones).toHaveLength(1);
    expect(tombstones[0]!.operator).toMatch(/^key:/);
    expect(tombstones[0]!.counts).toMatchObject({ threads: 1, 'orchestrator.threads': 1, 'memory.items': 1 });

    // Idempotent: erased again, answered as done, nothing more removed and no second tombstone.
    const again = await erase(threadId);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ threadId, erased: false, removed: {} });
    const [count] = await stack.orchestratorDb.sql.query<{ n: number }>(
      `select count(*)::int as n from ${stack.orchestratorDb.sql.table('erasures')} where tenant_id = ?`,
      [TENANT],
    );
    expect(count?.n).toBe(1);
  });

  it('refuses with 409 while a run of the thread is going, and removes nothing', async () => {
    await stack.publishRequest(TENANT, {
      requestId: 'busy',
      agent: 'slow',
      input: [{ role: 'user', content: 'weather?' }],
      principal: alice,
    });
    const threadId = threadIdFor(TENANT, 'busy');
    const runId = runIdFor(TENANT, 'busy');
    await stack.waitFor(TENANT, threadId, (events: ThreadEvent[]) => events.some((e) => e.type === 'run.started'));
    const res = await erase(threadId);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ status: 409, detail: expect.stringContaining('has a run going') });
    // The run goes on to its end, its log whole.
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
    expect(events.some((e) => e.type === 'run.completed')).toBe(true);
    // Once it ended, the erasure goes through.
    expect((await erase(threadId)).status).toBe(200);
    expect(await rowsHolding(threadId)).toEqual({});
  });

  it('answers 404 for a thread that never was', async () => {
    const res = await erase('thr_never_there');
    expect(res.status).toBe(404);
  });
});
