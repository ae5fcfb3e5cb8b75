import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { openServiceDatabase } from '@ratchet/adapters';
import { isSealed, type ThreadEvent } from '@ratchet/contracts';
import { exportThreads, importThreads, loadCliConfig, processOutput } from '@ratchet/operator';
import { testDatabaseKey } from '@ratchet/testing';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  let receiver: Server;
  let hookUrl: string;
  const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

  beforeAll(async () => {
    // A completion-webhook receiver that takes every delivery.
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS, WEBHOOK_ALLOW_PRIVATE: 'true' }),
      stack.start('tool-executor'),
      stack.start('memory'),
    ]);
    const gateway = await stack.start('gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: TENANT });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  afterAll(async () => {
    await stack?.stop();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
  });

  async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const found = await probe();
      if (found !== undefined) return found;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

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
    // The thread's feed (v2): one message per decision; the copy is its events.
    const subject = `${stack.prefix.subject}.feed.${TENANT}.${threadId}`;
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

  /** The thread's messages on the EVENTS stream as they are stored there (a copy, as a backup holds it). */
  async function streamCopy(threadId: string): Promise<{ id: string; type: string; data: unknown }[]> {
    // The thread's feed (v2): one message per decision; the copy is its events.
    const subject = `${stack.prefix.subject}.feed.${TENANT}.${threadId}`;
    const jsm = await stack.nc.jetstreamManager();
    const stream = await jsm.streams.find(subject);
    const consumer = await stack.nc.jetstream().consumers.get(stream, { filterSubjects: subject });
    const copy: { id: string; type: string; data: unknown }[] = [];
    const messages = await consumer.consume();
    for await (const m of messages) {
      copy.push(...(m.json<{ events: { id: string; type: string; data: unknown }[] }>().events ?? []));
      if (m.info.pending === 0) break;
    }
    messages.stop();
    return copy;
  }

  it("seals the thread's content in the log and on the stream; once erased, an old copy of its stream messages and an old export have their shape and not their content", async () => {
    const CANARY = 'oolong-canary-5d21';
    await stack.publishRequest(TENANT, {
      requestId: 'erase-sealed',
      agent: 'memo-saver',
      input: [{ role: 'user', content: `My favourite drink is ${CANARY}` }],
      principal: alice,
    });
    const threadId = threadIdFor(TENANT, 'erase-sealed');
    await stack.waitFor(TENANT, threadId, terminal(runIdFor(TENANT, 'erase-sealed')));

    // At rest: no table of the orchestrator holds the content in clear (memory keeps its own items).
    const clear = Object.keys(await rowsHolding(CANARY));
    expect(clear.filter((t) => t.startsWith('orchestrator.'))).toEqual([]);
    // On the stream: the content is sealed, the shape is clear.
    const copy = await streamCopy(threadId);
    expect(JSON.stringify(copy)).not.toContain(CANARY);
    const requested = copy.find((e) => e.type === 'run.requested')!;
    expect(isSealed((requested.data as { input: unknown }).input)).toBe(true);
    expect((requested.data as { agent: string }).agent).toBe('memo-saver');
    // Through the API it reads as written.
    const api = await fetch(`${base}/v1/threads/${threadId}/events`, { headers: auth });
    expect(await api.text()).toContain(CANARY);

    // An export taken before the erasure (written as stored).
    const env = { ...process.env, ...stack.env };
    const ctx = { config: loadCliConfig({}, env), out: processOutput(true) };
    const exported: string[] = [];
    await exportThreads(ctx, threadId, { tenant: TENANT }, (line) => exported.push(line));
    expect(exported.join('\n')).not.toContain(CANARY);
    const file = `${mkdtempSync(`${tmpdir()}/ratchet-export-`)}/thread.jsonl`;
    writeFileSync(file, `${exported.join('\n')}\n`);
    // Before the erasure, the deployment's keys open it.
    const before = await openServiceDatabase(stack.testDb.url, 'orchestrator', 1, testDatabaseKey());
    try {
      const opened = await before.content.openEvents(copy, 'throw');
      expect(JSON.stringify(opened)).toContain(CANARY);
    } finally {
      await before.close();
    }

    const res = await erase(threadId);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { removed: Record<string, number> }).removed).toMatchObject({
      'orchestrator.thread_keys': 1,
    });

    // After it, a process with the same master key (a restored backup, an operator) cannot open either copy.
    const after = await openServiceDatabase(stack.testDb.url, 'orchestrator', 1, testDatabaseKey());
    try {
      await expect(after.content.openEvents(copy, 'throw')).rejects.toMatchObject({
        code: 'content.sealed',
        absence: 'unknown',
      });
      const shown = await after.content.openEvents(copy, 'erased');
      expect(JSON.stringify(shown)).not.toContain(CANARY);
      expect(shown.map((e) => e.type)).toEqual(copy.map((e) => e.type));
    } finally {
      await after.close();
    }
    await expect(importThreads(ctx, file, { tenantMap: [] })).rejects.toMatchObject({ code: 'import.sealed' });
    expect((await fetch(`${base}/v1/threads/${threadId}`, { headers: auth })).status).toBe(404);
  });

  it("removes the thread's webhook deliveries and its run from a schedule's ticks, keeping the tick", async () => {
    const sql = stack.orchestratorDb.sql;
    // A run with a completion webhook: its delivery's body names the thread, the request and the output.
    await stack.publishRequest(TENANT, {
      requestId: 'erase-hooked',
      agent: 'memo-saver',
      input: [{ role: 'user', content: 'My favourite drink is black coffee' }],
      principal: alice,
      webhook: { url: hookUrl },
    });
    const hooked = threadIdFor(TENANT, 'erase-hooked');
    await stack.waitFor(TENANT, hooked, terminal(runIdFor(TENANT, 'erase-hooked')));
    await until('the webhook delivery', async () => {
      const rows = await sql.query(
        `select 1 from ${sql.table('webhook_deliveries')} where tenant_id = ? and body->>'threadId' = ?`,
        [TENANT, hooked],
      );
      return rows.length > 0 ? true : undefined;
    });
    expect(Object.keys(await rowsHolding(hooked))).toContain('orchestrator.webhook_deliveries');
    const res = await erase(hooked);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { removed: Record<string, number> }).removed).toMatchObject({
      'orchestrator.webhook_deliveries': 1,
    });
    expect(await rowsHolding(hooked)).toEqual({});
    expect(await rowsHolding('erase-hooked')).toEqual({});

    // A schedule's tick started a run on a thread of its own; the schedule is paused once it has.
    const created = await fetch(`${base}/v1/schedules`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        id: 'erase-tick',
        agent: 'memo-saver',
        input: 'My favourite drink is mint tea',
        everySeconds: 1,
      }),
    });
    expect(created.status).toBe(201);
    const tick = await until('a tick that started a run', async () => {
      const rows = await sql.query<{ request_id: string; thread_id: string; run_id: string }>(
        `select t.request_id, r.thread_id, r.run_id from ${sql.table('schedule_ticks')} t
           join ${sql.table('runs')} r on r.tenant_id = t.tenant_id and r.request_id = t.request_id
          where t.tenant_id = ? and t.schedule_id = 'erase-tick' and r.status = 'completed' limit 1`,
        [TENANT],
      );
      return rows[0];
    });
    const paused = await fetch(`${base}/v1/schedules/erase-tick`, {
      method: 'PATCH',
      headers: auth,
      body: JSON.stringify({ paused: true }),
    });
    expect(paused.status).toBe(200);
    await stack.waitFor(TENANT, tick.thread_id, terminal(tick.run_id));
    expect(Object.keys(await rowsHolding(tick.request_id))).toContain('orchestrator.schedule_ticks');

    expect((await erase(tick.thread_id)).status).toBe(200);
    expect(await rowsHolding(tick.thread_id)).toEqual({});
    expect(await rowsHolding(tick.request_id)).toEqual({});
    // The tick itself stays: the schedule's history still says a run was started then, not which.
    const [kept] = await sql.query<{ n: number }>(
      `select count(*)::int as n from ${sql.table('schedule_ticks')}
        where tenant_id = ? and schedule_id = 'erase-tick' and action = 'start' and request_id is null`,
      [TENANT],
    );
    expect(kept?.n).toBe(1);
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
