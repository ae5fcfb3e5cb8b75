import { tmpdir } from 'node:os';
import type { NatsConnection } from 'nats';
import {
  ApiKeyRepository,
  EffectLedgerRepository,
  connectNats,
  declareTopology,
  deleteTopology,
  hashApiKey,
  openServiceDatabase,
  type Database,
} from '@ratchet/adapters';
import { decodeThreadEvent, feedDecisionPayloads, subjects, type ThreadEvent } from '@ratchet/contracts';
import { foldRecord, recordFrom, runRowsOf } from '@ratchet/domain';
import { threadStore } from '@ratchet/platform';
import { createTestDatabase, demoRunEvents, testDatabaseKey, uniquePrefix, type TestDatabase } from '@ratchet/testing';
import { jsonLines, lines, ratchet, startRatchet } from './ratchet-process';

/*
 * Every operator command as a real child process against its own database and subject prefix on the
 * shared nats-server. Threads are written the way the orchestrator writes them (log + projection in one
 * transaction, then the feed); the services themselves are exercised in test/e2e/cli-*.e2e.spec.ts.
 */
// Each test runs several CLI processes (each compiles its sources at start): on a busy machine that alone
// can take a minute, so these get more than the integration tier's 60 s.
jest.setTimeout(180_000);

const TENANT = 'acme';
const A = { thread: 'th_CliOpsThreadA000000001', run: 'run_CliOpsRunA00000000001' };
const B = { thread: 'th_CliOpsThreadB000000002', run: 'run_CliOpsRunB00000000002' };

let testDb: TestDatabase;
let db: Database;
let nc: NatsConnection;
const prefix = uniquePrefix();
let env: Record<string, string>;
const stream = `${prefix.stream}_EVENTS`;
/** Stream sequence of each published event id. */
const seqOf = new Map<string, number>();

/**
 * The demo fixture with a request id of its own (request ids are unique per tenant in `runs`), written an hour
 * ago: stream-check counts an event older than the EVENTS stream's max age (7 days) as expired, not missing.
 */
function fixture(thread: string, run: string): ThreadEvent[] {
  return demoRunEvents(TENANT, thread, run, Date.now() - 3_600_000).map((e) =>
    decodeThreadEvent(JSON.parse(JSON.stringify(e).replaceAll('demo-5b1e0c', `req-${thread}`))),
  );
}

async function seed(events: ThreadEvent[]): Promise<void> {
  const { tenantId, threadId } = events[0]!;
  const record = foldRecord(recordFrom(), events);
  await threadStore(db).transaction(async (tx) => {
    await tx.appendEvents(tenantId, threadId, 0, events);
    await tx.saveProjection(
      { tenantId, threadId, version: events.length, state: record.state },
      runRowsOf(tenantId, threadId, record),
      { from: 1, messages: record.transcript },
    );
  });
  await publish(events);
}

/** Publishes each event as a decision of its own on the thread's decision feed (v2), as the relay names it. */
async function publish(events: ThreadEvent[]): Promise<void> {
  const js = nc.jetstream();
  for (const e of events) {
    const { id, payload } = feedDecisionPayloads([e])[0]!;
    const ack = await js.publish(subjects(prefix.subject).feed(e.tenantId, e.threadId), JSON.stringify(payload), {
      msgID: id,
    });
    seqOf.set(e.id, ack.seq);
  }
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  env = { DATABASE_URL: testDb.url, RATCHET_SUBJECT_PREFIX: prefix.subject, RATCHET_STREAM_PREFIX: prefix.stream };
  const migrated = await ratchet(['migrate', '--json'], env);
  expect(migrated).toEqual(expect.objectContaining({ code: 0 }));
  db = await openServiceDatabase(testDb.url, 'orchestrator', 2, testDatabaseKey());
  nc = await connectNats({ url: process.env['NATS_URL']!, name: 'cli-ops-int' });
  await seed(fixture(A.thread, A.run));
  await seed(fixture(B.thread, B.run));
});

afterAll(async () => {
  if (nc) {
    await deleteTopology(
      await nc.jetstreamManager(),
      declareTopology({ subjectPrefix: prefix.subject, streamPrefix: prefix.stream }),
    );
    await nc.close();
  }
  await db?.close();
  await testDb?.drop();
});

describe('replay --verify and rebuild', () => {
  it('catches a projection corrupted on purpose, naming the path; rebuild fixes it', async () => {
    const clean = await ratchet(['replay', A.thread, '--verify'], env);
    expect(clean).toEqual(expect.objectContaining({ code: 0 }));
    expect(clean.stdout).toContain(`ok        ${TENANT}/${A.thread} log v14, projection v14`);

    await db.sql.run(`update orchestrator.runs set steps = 9 where run_id = ?`, [A.run]);
    await db.sql.run(
      `update orchestrator.threads set state = jsonb_set(state, '{messages}', '99') where thread_id = ?`,
      [A.thread],
    );
    await db.sql.run(
      `update orchestrator.thread_messages set message = jsonb_set(message, '{content}', '"tampered"') where thread_id = ? and seq = 1`,
      [A.thread],
    );
    // A message lost: the conversation is shorter than the log's.
    await db.sql.run(
      `delete from orchestrator.thread_messages where thread_id = ? and seq = (select max(seq) from orchestrator.thread_messages where thread_id = ?)`,
      [B.thread, B.thread],
    );
    await db.sql.run(`update orchestrator.runs set status = 'running' where run_id = ?`, [B.run]);

    const broken = await ratchet(['replay', '--all', '--verify'], env);
    expect(broken).toEqual(expect.objectContaining({ code: 1 }));
    expect(broken.stdout).toContain(`DIVERGED  ${TENANT}/${A.thread}`);
    expect(broken.stdout).toContain(`runs.${A.run}.steps: stored 9 ≠ replayed 2`);
    expect(broken.stdout).toContain(`state.messages: stored 99 ≠ replayed`);
    expect(broken.stdout).toContain(
      `messages.1.content: stored "tampered" ≠ replayed "What is the weather in Oslo and Rome?"`,
    );
    expect(broken.stdout).toContain(`runs.${B.run}.status: stored "running" ≠ replayed "completed"`);
    expect(broken.stdout).toMatch(/messages\.\d+: stored undefined ≠ replayed \{"role":"assistant"/);
    expect(broken.stdout).toContain('2 threads replayed, 2 divergent projections');

    const json = await ratchet(['replay', A.thread, '--verify', '--json'], env);
    expect(json).toEqual(expect.objectContaining({ code: 1 }));
    expect(jsonLines(json.stdout)[0]).toMatchObject({
      threadId: A.thread,
      divergences: expect.arrayContaining([
        expect.stringContaining('runs'),
        expect.stringContaining('state.messages'),
        expect.stringContaining('messages.1.content'),
      ]),
    });

    // Without --verify the same divergence is reported but is not a failure.
    expect(await ratchet(['replay', A.thread], env)).toEqual(expect.objectContaining({ code: 0 }));

    const rebuilt = await ratchet(['rebuild', '--tenant', TENANT, '--json'], env);
    expect(rebuilt).toEqual(expect.objectContaining({ code: 0 }));
    expect(jsonLines(rebuilt.stdout)).toEqual([
      { tenantId: TENANT, threadId: A.thread, version: 14, runs: 1 },
      { tenantId: TENANT, threadId: B.thread, version: 14, runs: 1 },
    ]);
    expect(await ratchet(['replay', '--all', '--verify'], env)).toEqual(expect.objectContaining({ code: 0 }));
  });

  it('rebuilds a missing projection row, and resumes after a thread in key order', async () => {
    await db.sql.run(`delete from orchestrator.threads where thread_id = ?`, [B.thread]);
    const missing = await ratchet(['replay', B.thread, '--verify'], env);
    expect(missing).toEqual(expect.objectContaining({ code: 1 }));
    expect(missing.stdout).toContain('(projection): missing, the log has events');

    const resumed = await ratchet(['rebuild', '--after', `${TENANT}/${A.thread}`, '--json'], env);
    expect(resumed).toEqual(expect.objectContaining({ code: 0 }));
    expect(jsonLines(resumed.stdout).map((r) => r['threadId'])).toEqual([B.thread]);
    expect(await ratchet(['replay', '--all', '--verify'], env)).toEqual(expect.objectContaining({ code: 0 }));
  });
});

describe('stream-check', () => {
  it('finds an event deleted from the EVENTS stream and --repair restores it', async () => {
    expect(await ratchet(['stream-check', '--all'], env)).toEqual(expect.objectContaining({ code: 0 }));
    const events = await threadStore(db).readEvents(TENANT, A.thread);
    const victim = events[9]!; // v10
    const jsm = await nc.jetstreamManager();
    expect(await jsm.streams.deleteMessage(stream, seqOf.get(victim.id)!)).toBe(true);

    const check = await ratchet(['stream-check', A.thread], env);
    expect(check).toEqual(expect.objectContaining({ code: 1 }));
    expect(check.stdout).toContain(`missing     v10 ${victim.type} ${victim.id}`);

    const repair = await ratchet(['stream-check', '--all', '--repair', '--json'], env);
    expect(repair).toEqual(expect.objectContaining({ code: 0 }));
    const report = jsonLines<{ threadId: string; missing: { id: string }[]; repaired: number }>(repair.stdout);
    expect(report.find((r) => r.threadId === A.thread)).toMatchObject({ missing: [{ id: victim.id }], repaired: 1 });

    const after = await ratchet(['stream-check', A.thread, '--json'], env);
    expect(after).toEqual(expect.objectContaining({ code: 0 }));
    const [again] = jsonLines<{ missing: unknown[]; reordered: { version: number }[] }>(after.stdout);
    expect(again!.missing).toEqual([]);
    expect(again!.reordered.map((r) => r.version)).toEqual([10]); // republished at the end of the stream
  });

  it('reports messages the log does not have', async () => {
    const forged = { ...fixture(B.thread, B.run)[0]!, id: 'ev_forged_not_in_log' };
    await publish([forged]);
    const check = await ratchet(['stream-check', B.thread], env);
    expect(check).toEqual(expect.objectContaining({ code: 1 }));
    expect(check.stdout).toContain('unknown     seq');
    expect(check.stdout).toContain('ev_forged_not_in_log');
    await (await nc.jetstreamManager()).streams.deleteMessage(stream, seqOf.get(forged.id)!);
  });
});

describe('moving a thread that is not idle', () => {
  const C = { tenant: 'busyco', thread: 'th_CliOpsThreadC000000003', run: 'run_CliOpsRunC00000000003' };

  it('export refuses it, a tenant export leaves it out, and import refuses a log that ends mid-run', async () => {
    // Thread C's run has not ended: its log stops before run.completed.
    const events = demoRunEvents(C.tenant, C.thread, C.run)
      .map((e) => decodeThreadEvent(JSON.parse(JSON.stringify(e).replaceAll('demo-5b1e0c', `req-${C.thread}`))))
      .filter((e) => e.type !== 'run.completed');
    await seed(events);

    const refused = await ratchet(['export', C.thread], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is not idle (run ${C.run} is going)`);
    expect(refused.stdout).toBe('');

    const tenant = await ratchet(['export', '--tenant', C.tenant], env);
    expect(tenant.code).toBe(0);
    expect(JSON.parse(lines(tenant.stdout)[0]!)).toMatchObject({ threads: 0, events: 0 });
    expect(tenant.stderr).toContain(`left out, not idle: ${C.tenant}/${C.thread}`);

    // An export of an idle thread cut before its end, moved to a new tenant: refused, nothing written.
    const exported = await ratchet(['export', A.thread], env);
    const [header, ...rest] = lines(exported.stdout);
    const cut = [JSON.stringify({ ...JSON.parse(header!), events: rest.length - 1 }), ...rest.slice(0, -1)];
    const fs = await import('node:fs/promises');
    const path = `${tmpdir()}/${testDb.name}-mid-run.jsonl`;
    await fs.writeFile(path, `${cut.join('\n')}\n`);
    try {
      const imported = await ratchet(['import', path, '--tenant-map', `${TENANT}=moved`], env);
      expect(imported.code).toBe(1);
      expect(imported.stdout).toContain(`conflict  moved/${A.thread}`);
      expect(imported.stdout).toContain(`not idle in the export (run ${A.run} is going)`);
      const rows = await db.sql.query(`select 1 from orchestrator.thread_events where tenant_id = 'moved'`);
      expect(rows).toEqual([]);
    } finally {
      await fs.rm(path, { force: true });
      // Later tests list every thread: C is not theirs.
      for (const table of ['thread_events', 'thread_messages', 'threads', 'runs'])
        await db.sql.run(`delete from orchestrator.${table} where thread_id = ?`, [C.thread]);
    }
  });
});

describe('export and import', () => {
  it('export → delete the rows → import reproduces the thread exactly; re-import is a no-op', async () => {
    const before = await threadStore(db).readEvents(TENANT, A.thread);
    const exported = await ratchet(['export', A.thread], env);
    expect(exported).toEqual(expect.objectContaining({ code: 0 }));
    const [header, ...rest] = lines(exported.stdout);
    expect(JSON.parse(header!)).toMatchObject({
      format: 'ratchet.thread-events',
      formatVersion: 1,
      threads: 1,
      events: 14,
    });
    expect(rest).toHaveLength(14);
    // Content is exported as the log stores it: sealed with the thread's key (ADR 0034).
    expect(exported.stdout).not.toContain('light rain');

    const file = `${testDb.name}.jsonl`;
    const fs = await import('node:fs/promises');
    const path = `${tmpdir()}/${file}`;
    await fs.writeFile(path, exported.stdout);
    try {
      for (const table of ['thread_events', 'threads', 'runs']) {
        await db.sql.run(`delete from orchestrator.${table} where thread_id = ?`, [A.thread]);
      }
      const imported = await ratchet(['import', path], env);
      expect(imported).toEqual(expect.objectContaining({ code: 0 }));
      expect(imported.stdout).toContain(`imported  ${TENANT}/${A.thread} (14 events)`);
      expect(await threadStore(db).readEvents(TENANT, A.thread)).toEqual(before);
      expect(await ratchet(['replay', A.thread, '--verify'], env)).toEqual(expect.objectContaining({ code: 0 }));

      const again = await ratchet(['import', path, '--json'], env);
      expect(again).toEqual(expect.objectContaining({ code: 0 }));
      expect(jsonLines(again.stdout)).toEqual([expect.objectContaining({ outcome: 'unchanged' })]);

      // Different content under the same thread: refused, never overwritten (an export in clear, edited).
      const clear = await ratchet(['export', A.thread, '--decrypt'], env);
      expect(clear.stdout).toContain('light rain');
      const tampered = clear.stdout.replace('light rain', 'snow');
      await fs.writeFile(path, tampered);
      const conflict = await ratchet(['import', path], env);
      expect(conflict).toEqual(expect.objectContaining({ code: 1 }));
      expect(conflict.stdout).toContain(`conflict  ${TENANT}/${A.thread}`);
      expect(await threadStore(db).readEvents(TENANT, A.thread)).toEqual(before);

      // Moved to another tenant: in the same database the event ids clash (they are unique); once the
      // original is gone it moves.
      await fs.writeFile(path, exported.stdout);
      const clash = await ratchet(['import', path, '--tenant-map', `${TENANT}=acme2`], env);
      expect(clash).toEqual(expect.objectContaining({ code: 1 }));
      expect(clash.stdout).toContain('their ids exist in this database under another tenant or thread');
      for (const table of ['thread_events', 'threads', 'runs']) {
        await db.sql.run(`delete from orchestrator.${table} where thread_id = ?`, [A.thread]);
      }
      const moved = await ratchet(['import', path, '--tenant-map', `${TENANT}=acme2`], env);
      expect(moved).toEqual(expect.objectContaining({ code: 0 }));
      expect(moved.stdout).toContain(`imported  acme2/${A.thread} (14 events)`);
      expect(await ratchet(['replay', A.thread, '--verify'], env)).toEqual(expect.objectContaining({ code: 0 }));
      // And back, so later tests find it where it was.
      await db.sql.run(`delete from orchestrator.thread_events where thread_id = ?`, [A.thread]);
      await db.sql.run(`delete from orchestrator.threads where thread_id = ?`, [A.thread]);
      await db.sql.run(`delete from orchestrator.runs where thread_id = ?`, [A.thread]);
      expect(await ratchet(['import', path], env)).toEqual(expect.objectContaining({ code: 0 }));
    } finally {
      await fs.rm(path, { force: true });
    }
  });

  it('refuses a file with a gap in versions or an invalid event, naming the line, before writing anything', async () => {
    const fs = await import('node:fs/promises');
    const path = `${tmpdir()}/${testDb.name}-bad.jsonl`;
    const events = demoRunEvents(TENANT, 'th_CliOpsImportGap0000001', 'run_CliOpsImportGap000001');
    const header = JSON.stringify({
      format: 'ratchet.thread-events',
      formatVersion: 1,
      exportedAt: '',
      threads: 1,
      events: 2,
    });
    try {
      await fs.writeFile(path, [header, JSON.stringify(events[0]), JSON.stringify(events[2])].join('\n'));
      const gap = await ratchet(['import', path], env);
      expect(gap).toEqual(expect.objectContaining({ code: 1 }));
      expect(gap.stderr).toContain('line 3: thread acme/th_CliOpsImportGap0000001 has version 3 where 2 was expected');

      await fs.writeFile(path, [header, JSON.stringify({ ...events[0], type: 'thread.exploded' })].join('\n'));
      const invalid = await ratchet(['import', path], env);
      expect(invalid).toEqual(expect.objectContaining({ code: 1 }));
      expect(invalid.stderr).toContain('line 2: not a valid thread event');
      expect(await threadStore(db).readEvents(TENANT, 'th_CliOpsImportGap0000001')).toEqual([]);
    } finally {
      await fs.rm(path, { force: true });
    }
  });
});

describe('fork', () => {
  it('forks in the middle of a super-step: a valid thread whose open calls and run are closed', async () => {
    const fork = await ratchet(
      ['fork', A.thread, '--at', '9', '--new-thread', 'th_CliOpsFork000000000001', '--json'],
      env,
    );
    expect(fork).toEqual(expect.objectContaining({ code: 0 }));
    const [report] = jsonLines<{ version: number; cancelledRuns: string[]; renamed: Record<string, string> }>(
      fork.stdout,
    );
    const newRun = report!.renamed[A.run]!;
    expect(report).toMatchObject({ version: 12, cancelledRuns: [newRun] });

    const source = await threadStore(db).readEvents(TENANT, A.thread);
    const forked = await threadStore(db).readEvents(TENANT, 'th_CliOpsFork000000000001');
    expect(forked.map((e) => e.type)).toEqual([
      ...source.slice(0, 9).map((e) => e.type),
      'run.cancelled',
      'tool.cancelled',
      'tool.cancelled',
    ]);
    forked.slice(0, 9).forEach((e, i) => {
      expect(e.causationId).toBe(source[i]!.id);
      expect(e.id).not.toBe(source[i]!.id);
      expect(e.threadId).toBe('th_CliOpsFork000000000001');
      expect(e.runId).toBe(i === 0 ? undefined : newRun);
    });
    // The calls never go out from the fork: named as pending by the end, then closed as cancelled.
    expect(forked[9]!.data).toEqual({
      by: 'ratchet fork',
      reason: 'forked',
      closedCalls: [],
      pendingCalls: ['call_1_1', 'call_1_2'],
    });
    expect(forked.slice(10).map((e) => (e.data as { callId: string }).callId)).toEqual(['call_1_1', 'call_1_2']);
    expect(JSON.stringify(forked)).not.toContain(A.run);
    expect(await ratchet(['replay', 'th_CliOpsFork000000000001', '--verify'], env)).toEqual(
      expect.objectContaining({ code: 0 }),
    );
    // The source is untouched.
    expect(await ratchet(['replay', A.thread, '--verify'], env)).toEqual(expect.objectContaining({ code: 0 }));

    const again = await ratchet(['fork', A.thread, '--at', '9', '--new-thread', 'th_CliOpsFork000000000001'], env);
    expect(again).toEqual(expect.objectContaining({ code: 1 }));
    expect(again.stderr).toContain('already exists');
    expect(await ratchet(['fork', A.thread, '--at', '99'], env)).toEqual(expect.objectContaining({ code: 1 }));
  });
});

describe('threads, effects and events with the ledger', () => {
  it('lists threads with filters', async () => {
    const all = await ratchet(['threads', '--tenant', TENANT, '--json'], env);
    expect(all).toEqual(expect.objectContaining({ code: 0 }));
    const rows = jsonLines<{ threadId: string; status: string; lastRun: { status: string } | null }>(all.stdout);
    expect(rows.map((r) => r.threadId).sort()).toEqual(
      expect.arrayContaining([A.thread, B.thread, 'th_CliOpsFork000000000001']),
    );
    expect(rows.find((r) => r.threadId === A.thread)).toMatchObject({
      status: 'idle',
      lastRun: { status: 'completed' },
    });
    const running = await ratchet(['threads', '--status', 'running', '--json'], env);
    expect(jsonLines(running.stdout)).toEqual([]);
    const human = await ratchet(['threads', '--agent', 'demo', '--since', '1d'], env);
    expect(lines(human.stdout)[0]).toMatch(/^TENANT +THREAD +STATUS +AGENT/);
  });

  it('shows ledger rows with retries and escalations, and joins them into the timeline', async () => {
    const tools = await openServiceDatabase(testDb.url, 'tools', 2);
    try {
      const ledger = new EffectLedgerRepository(tools.sql);
      const key = (call: string) => `${TENANT}:${B.thread}:${B.run}:1:${call}`;
      const base = { tenantId: TENANT, threadId: B.thread, runId: B.run, tool: 'demo.weather', kind: 'idempotent' };
      await ledger.recordStarted({ ...base, key: key('call_1_1'), callId: 'call_1_1' });
      await ledger.recordAttempt(key('call_1_1'));
      await ledger.recordOutcome(key('call_1_1'), 'succeeded', { ok: true }, { state: 'started', attempts: 2 });
      await ledger.recordStarted({ ...base, key: key('call_1_2'), callId: 'call_1_2' });
      await ledger.recordOutcome(key('call_1_2'), 'uncertain', null, { state: 'started', attempts: 1 });
    } finally {
      await tools.close();
    }
    const effects = await ratchet(['effects', B.thread], env);
    expect(effects).toEqual(expect.objectContaining({ code: 0 }));
    expect(effects.stdout).toMatch(/:call_1_1 +demo\.weather +idempotent +succeeded +2 +completed/);
    expect(effects.stdout).toMatch(/:call_1_2 +demo\.weather +idempotent +uncertain +1 +completed/);
    expect(effects.stdout).toContain('1 escalation');

    const events = await ratchet(['events', B.thread], env);
    expect(events).toEqual(expect.objectContaining({ code: 0 }));
    expect(events.stdout).toMatch(/tool\.requested +demo\.weather call_1_1 key .* \[ledger succeeded ×2 RETRIED\]/);
    expect(events.stdout).toMatch(/run\.resumed +RESUME from v4/);
    expect(events.stdout).toMatch(/thread\.created +by key:demo-local trace 4bf92f3577b34da6a3ce929d0e0e4736/);
  });
});

describe('events --follow', () => {
  it('prints the stored log, then the live feed from the next version: no gap, no duplicate', async () => {
    const thread = 'th_CliOpsFollow000000001';
    const all = fixture(thread, 'run_CliOpsFollow000000001');
    await seed(all.slice(0, 5));
    const follow = startRatchet(['events', thread, '--follow', '--json'], env);
    try {
      await follow.waitForOutput((out) => lines(out).length === 5);
      // The rest is committed in two batches; the feed also redelivers old events and skips v8.
      const store = threadStore(db);
      await store.transaction((tx) => tx.appendEvents(TENANT, thread, 5, all.slice(5, 9)));
      await publish([all[2]!, all[5]!, all[6]!, all[8]!]);
      await follow.waitForOutput((out) => lines(out).length === 9);
      await store.transaction((tx) => tx.appendEvents(TENANT, thread, 9, all.slice(9)));
      await publish(all.slice(9));
      await follow.waitForOutput((out) => lines(out).length === 14);
    } finally {
      follow.child.kill('SIGINT');
    }
    const run = await follow.done;
    expect(run).toEqual(expect.objectContaining({ code: 0 }));
    expect(lines(run.stdout).map((l) => decodeThreadEvent(JSON.parse(l)).version)).toEqual(
      Array.from({ length: 14 }, (_, i) => i + 1),
    );
  });
});

describe('outbox, inbox, doctor and keys', () => {
  it('reports unsent and stuck outbox rows and recent failures', async () => {
    await db.sql.run(
      `insert into orchestrator.outbox (id, subject, headers, payload, attempts) values ('ob_stuck_1', 'x.y', '{}', '{}', 9)`,
    );
    await db.sql.run(
      `insert into orchestrator.failed_messages (consumer, subject, stream_seq, code, reason, payload)
       values ('orchestrator-inbox', 'x.inbox', 42, 'message.invalid', 'bad json', '{')`,
    );
    const outbox = await ratchet(['outbox', '--service', 'orchestrator'], env);
    expect(outbox).toEqual(expect.objectContaining({ code: 1 }));
    expect(outbox.stdout).toMatch(/^orchestrator +1 +\S+/m);
    expect(outbox.stdout).toContain('stuck ob_stuck_1 → x.y (9 attempts');
    expect(outbox.stdout).toContain('orchestrator-inbox x.inbox seq 42: message.invalid: bad json');
    const json = await ratchet(['outbox', '--json'], env);
    expect(jsonLines(json.stdout)).toHaveLength(5);
    await db.sql.run(`delete from orchestrator.outbox where id = 'ob_stuck_1'`);
    expect(await ratchet(['outbox', '--service', 'orchestrator'], env)).toEqual(expect.objectContaining({ code: 0 }));

    await db.sql.run(
      `insert into orchestrator.inbox (consumer, message_id) values ('orchestrator-inbox', 'm1'), ('orchestrator-inbox', 'm2')`,
    );
    const inbox = await ratchet(['inbox', '--service', 'orchestrator'], env);
    expect(inbox).toEqual(expect.objectContaining({ code: 0 }));
    expect(inbox.stdout).toMatch(/^orchestrator +orchestrator-inbox +2 +2 /m);
  });

  it('doctor passes on a migrated stack and names a missing consumer', async () => {
    expect(await ratchet(['migrate'], env)).toEqual(expect.objectContaining({ code: 0 }));
    const ok = await ratchet(['doctor'], env);
    expect(ok.stdout).toMatch(/^ok +migrations +schema orchestrator +up to date$/m);
    expect(ok.stdout).toMatch(/^ok +clock +this host vs postgres now\(\) +skew/m);
    expect(ok.stdout).toMatch(new RegExp(`^ok +stream +${prefix.stream}_EVENTS +\\d+ messages$`, 'm'));
    expect(ok).toEqual(expect.objectContaining({ code: 0 }));

    await (await nc.jetstreamManager()).consumers.delete(`${prefix.stream}_COMMANDS`, 'approvals');
    const broken = await ratchet(['doctor', '--json'], env);
    expect(broken).toEqual(expect.objectContaining({ code: 1 }));
    expect(jsonLines(broken.stdout)).toContainEqual({
      area: 'consumer',
      name: 'approvals',
      ok: false,
      detail: `missing on ${prefix.stream}_COMMANDS`,
    });
    expect(await ratchet(['migrate'], env)).toEqual(expect.objectContaining({ code: 0 }));
    expect(await ratchet(['doctor'], env)).toEqual(expect.objectContaining({ code: 0 }));
  });

  it('creates a key (secret printed once), lists it and revokes it', async () => {
    const created = await ratchet(
      [
        'keys',
        'create',
        '--tenant',
        TENANT,
        '--roles',
        'runner,viewer',
        '--name',
        'ci',
        '--expires-in',
        '30d',
        '--json',
      ],
      env,
    );
    expect(created).toEqual(expect.objectContaining({ code: 0 }));
    const [key] = jsonLines<{ id: string; secret: string; roles: string[]; expiresAt: string }>(created.stdout);
    expect(key!.roles).toEqual(['runner', 'viewer']);
    expect(key!.secret).toMatch(/^rk_/);
    const gateway = await openServiceDatabase(testDb.url, 'gateway', 1);
    try {
      expect(await new ApiKeyRepository(gateway.sql).findByHash(hashApiKey(key!.secret))).toMatchObject({
        id: key!.id,
      });
    } finally {
      await gateway.close();
    }
    const list = await ratchet(['keys', 'list', '--tenant', TENANT], env);
    expect(list.stdout).toMatch(new RegExp(`${key!.id} +ci +runner,viewer +active`));
    expect(list.stdout).not.toContain(key!.secret);
    expect(await ratchet(['keys', 'revoke', key!.id], env)).toEqual(expect.objectContaining({ code: 0 }));
    expect((await ratchet(['keys', 'list', '--tenant', TENANT], env)).stdout).toMatch(
      new RegExp(`${key!.id} .* revoked`),
    );
    const twice = await ratchet(['keys', 'revoke', key!.id], env);
    expect(twice).toEqual(expect.objectContaining({ code: 1 }));
    expect(await ratchet(['keys', 'create', '--roles', 'runner'], env)).toEqual(expect.objectContaining({ code: 2 }));
  });
});
