import { MemoryClient } from '@ratchet/adapters';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { terminal, TestStack } from './stack';
import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/*
 * Erasure and retention on real runs through the real services (orchestrator, tool executor, memory):
 * two principals, a canary in alice's input; then nothing of alice may remain in any table of any
 * schema or in the EVENTS stream, while bob's threads stay intact and verifiable.
 */
const TENANT = 'erasee2e';
const CANARY = 'canary-7f3a9e';
const cli = sourceCommand('apps/cli/src/main.ts');
const ratchet = (args: string[], env: Record<string, string>) =>
  runProcess(cli.command, [...cli.args, ...args], { ...cli.env, ...env });
const ok = expect.objectContaining({ code: 0 });

describe('ratchet erase and retention on real runs', () => {
  let stack: TestStack;
  const req = (name: string) => ({ requestId: `erase-e2e-${name}`, thread: threadIdFor(TENANT, `erase-e2e-${name}`) });
  const alice = req('alice');
  const bob = req('bob');
  const bobDrop = req('bob-drop');

  async function runDemo(requestId: string, principal: string, content: string, threadId?: string) {
    await stack.publishRequest(TENANT, {
      requestId,
      agent: 'demo',
      ...(threadId ? { threadId } : {}),
      input: [{ role: 'user', content }],
      principal: { id: principal, roles: ['runner'] },
    });
    await stack.waitFor(TENANT, threadId ?? threadIdFor(TENANT, requestId), terminal(runIdFor(TENANT, requestId)));
  }

  /** Every (schema.table) whose rows, as text, contain `needle`. */
  async function tablesContaining(needle: string): Promise<string[]> {
    const sql = stack.orchestratorDb.sql;
    const tables = await sql.query<{ table_schema: string; table_name: string }>(
      `select table_schema, table_name from information_schema.tables
       where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    expect(tables.length).toBeGreaterThan(10);
    const found: string[] = [];
    for (const t of tables) {
      const q = `"${t.table_schema}"."${t.table_name}"`;
      const rows = await sql.query<{ n: number }>(
        `select count(*)::int as n from ${q} x where strpos(x::text, ?) > 0`,
        [needle],
      );
      if (rows[0]!.n > 0) found.push(`${t.table_schema}.${t.table_name}`);
    }
    return found;
  }

  /** Reads the whole EVENTS stream, message bytes as text, and counts the messages mentioning `needle`. */
  async function streamContaining(needle: string): Promise<number> {
    const stream = `${stack.prefix.stream}_EVENTS`;
    const jsm = await stack.nc.jetstreamManager();
    const { state } = await jsm.streams.info(stream);
    let found = 0;
    for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined); // deleted: a gap
      if (m && (m.subject.includes(needle) || new TextDecoder().decode(m.data).includes(needle))) found += 1;
    }
    return found;
  }

  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator'), stack.start('tool-executor'), stack.start('memory')]);
    await runDemo(alice.requestId, 'alice', `What is the weather in Oslo? My code is ${CANARY}.`);
    await runDemo(bob.requestId, 'bob', 'What is the weather in Rome?');
    await runDemo(bobDrop.requestId, 'bob', 'What is the weather in Paris?');
    const memory = new MemoryClient(stack.nc, { subjectPrefix: stack.prefix.subject });
    const put = await memory.put(TENANT, {
      principal: { id: 'alice', roles: ['runner'] },
      namespace: 'users/alice',
      key: 'note',
      value: { note: `remember ${CANARY}` },
      subject: 'alice',
    });
    expect(put).toEqual(expect.objectContaining({ ok: true }));
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('erase --dry-run counts alice’s data and changes nothing', async () => {
    const before = await tablesContaining(CANARY);
    // The run's input is in its events and in the thread's conversation (`thread_messages`), sealed with
    // the thread's key (content at rest): in clear it is only in memory, which keeps its own items.
    expect(before.filter((t) => t.startsWith('orchestrator.'))).toEqual([]);
    expect(before).toContain('memory.items');
    const threadRows = await tablesContaining(alice.thread);
    expect(threadRows).toEqual(
      expect.arrayContaining([
        'orchestrator.thread_events',
        'orchestrator.thread_messages',
        'orchestrator.thread_keys',
      ]),
    );
    const dry = await ratchet(['erase', '--subject', 'alice', '--dry-run', '--json'], stack.env);
    expect(dry).toEqual(ok);
    const report = JSON.parse(dry.stdout) as {
      dryRun: boolean;
      total: number;
      tenants: { threads: string[]; removed: Record<string, number> }[];
    };
    expect(report.dryRun).toBe(true);
    expect(report.tenants[0]!.threads).toEqual([alice.thread]);
    expect(report.tenants[0]!.removed).toEqual(
      expect.objectContaining({ 'orchestrator.thread_events': expect.any(Number), 'memory.items': 1 }),
    );
    expect(await tablesContaining(CANARY)).toEqual(before);
    expect(await tablesContaining(alice.thread)).toEqual(threadRows);
    expect(await streamContaining(alice.thread)).toBeGreaterThan(0);
  });

  it('erase --subject alice leaves nothing of alice anywhere, keeps bob, writes a nameless tombstone; a rerun removes nothing', async () => {
    const res = await ratchet(['erase', '--subject', 'alice', '--operator', 'e2e-op', '--json'], stack.env);
    expect(res).toEqual(ok);
    const report = JSON.parse(res.stdout) as {
      memory: string;
      total: number;
      tenants: { removed: Record<string, number> }[];
    };
    expect(report.memory).toBe('service');
    expect(report.tenants[0]!.removed['orchestrator.thread_events']).toBeGreaterThan(0);
    expect(report.tenants[0]!.removed['tools.effects']).toBeGreaterThan(0);
    expect(Object.keys(report.tenants[0]!.removed).some((k) => k.startsWith('nats.'))).toBe(true);

    expect(await tablesContaining(CANARY)).toEqual([]);
    expect(await tablesContaining(alice.thread)).toEqual([]);
    expect(await streamContaining(CANARY)).toBe(0);
    expect(await streamContaining(alice.thread)).toBe(0);
    const runsOfAlice = await stack.orchestratorDb.sql.query(
      `select 1 from "orchestrator"."runs" where principal_id = 'alice'`,
    );
    expect(runsOfAlice).toEqual([]);

    // The tombstone: the hash, counts and operator, never the name.
    const tombstones = await stack.orchestratorDb.sql.query<{ subject_hash: string; operator: string; row: string }>(
      `select subject_hash, operator, e::text as row from "orchestrator"."erasures" e`,
    );
    expect(tombstones).toHaveLength(1);
    expect(tombstones[0]!.subject_hash).toBe(createHash('sha256').update(`${TENANT}\u0000alice`).digest('hex'));
    expect(tombstones[0]!.operator).toBe('e2e-op');
    expect(tombstones[0]!.row).not.toMatch(/alice/);

    // Bob's threads are untouched and verify.
    for (const t of [bob.thread, bobDrop.thread]) {
      expect(await ratchet(['replay', t, '--tenant', TENANT, '--verify'], stack.env)).toEqual(ok);
    }

    const again = await ratchet(['erase', '--subject', 'alice'], stack.env);
    expect(again).toEqual(ok);
    expect(again.stdout).toContain('nothing to erase for this subject (already erased');
    const count = await stack.orchestratorDb.sql.query(`select 1 from "orchestrator"."erasures"`);
    expect(count).toHaveLength(1);
  });

  it('retention rejects a malformed RATCHET_RETENTION by name', async () => {
    const bad = await ratchet(['retention', 'run'], { ...stack.env, RATCHET_RETENTION: 'default=shred:30d' });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toContain('RATCHET_RETENTION');
  });

  it('retention compact keeps a thread resumable and verifiable; drop removes a thread everywhere', async () => {
    const eventsBefore = (await stack.events(TENANT, bob.thread)).length;
    expect(eventsBefore).toBeGreaterThan(2);
    const dry = await ratchet(['retention', 'run', '--dry-run', '--json'], {
      ...stack.env,
      RATCHET_RETENTION: `default=compact:0d`,
    });
    expect(dry).toEqual(ok);
    expect((await stack.events(TENANT, bob.thread)).length).toBe(eventsBefore);

    const compact = await ratchet(['retention', 'run', '--json'], {
      ...stack.env,
      RATCHET_RETENTION: 'default=compact:0d',
    });
    expect(compact).toEqual(ok);
    const lines = compact.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ threadId: bob.thread, outcome: 'compacted', eventsRemoved: eventsBefore - 1 }),
      ]),
    );
    expect(await stack.events(TENANT, bob.thread)).toHaveLength(1);
    expect(await ratchet(['replay', bob.thread, '--tenant', TENANT, '--verify'], stack.env)).toEqual(ok);
    expect(await ratchet(['replay', '--tenant', TENANT, '--verify'], stack.env)).toEqual(ok);
    const exported = await ratchet(['export', bob.thread, '--tenant', TENANT], stack.env);
    expect(exported).toEqual(ok);
    expect(exported.stdout.split('\n')[1]).toMatch(/^\{"snapshot":\{/);

    // Resumable: a new run on the compacted thread completes, and the projection still verifies.
    const next = `${bob.requestId}-2`;
    await runDemo(next, 'bob', 'And in Madrid?', bob.thread);
    expect(await ratchet(['replay', bob.thread, '--tenant', TENANT, '--verify'], stack.env)).toEqual(ok);
    expect(await ratchet(['rebuild', '--thread', bob.thread, '--tenant', TENANT], stack.env)).toEqual(ok);
    expect(await ratchet(['replay', bob.thread, '--tenant', TENANT, '--verify'], stack.env)).toEqual(ok);

    // Drop: every finished thread of the tenant goes (bob's too); bobDrop must be gone from every table and the stream.
    const drop = await ratchet(['retention', 'run', '--tenant', TENANT], {
      ...stack.env,
      RATCHET_RETENTION: `${TENANT}=drop:0d`,
    });
    expect(drop).toEqual(ok);
    expect(drop.stdout).toMatch(/drop +erasee2e\//);
    expect(await tablesContaining(bobDrop.thread)).toEqual([]);
    expect(await streamContaining(bobDrop.thread)).toBe(0);

    // Restore: the compacted export (taken before the second run) comes back as a compacted thread,
    // its projection rebuilt and verified; importing it again changes nothing.
    const file = path.join(os.tmpdir(), `compacted-${bob.thread}.jsonl`);
    await writeFile(file, exported.stdout);
    try {
      const restored = await ratchet(['import', file, '--json'], stack.env);
      expect(restored).toEqual(ok);
      expect(JSON.parse(restored.stdout.trim().split('\n')[0]!)).toMatchObject({
        threadId: bob.thread,
        outcome: 'imported',
      });
      expect(await stack.events(TENANT, bob.thread)).toHaveLength(1);
      expect(await ratchet(['replay', bob.thread, '--tenant', TENANT, '--verify'], stack.env)).toEqual(ok);
      const again = await ratchet(['import', file, '--json'], stack.env);
      expect(again).toEqual(ok);
      expect(JSON.parse(again.stdout.trim().split('\n')[0]!)).toMatchObject({ outcome: 'unchanged' });
      // The restored thread takes new runs like any compacted thread.
      await runDemo(`${bob.requestId}-3`, 'bob', 'And in Lisbon?', bob.thread);
      expect(await ratchet(['replay', bob.thread, '--tenant', TENANT, '--verify'], stack.env)).toEqual(ok);
      // The thread has moved on since the export: the same file is now a conflict, and nothing is written.
      const tampered = await ratchet(['import', file], stack.env);
      expect(tampered.code).toBe(1);
      expect(tampered.stdout).toContain(`conflict  ${TENANT}/${bob.thread}`);
    } finally {
      await rm(file, { force: true });
    }
  });
});
