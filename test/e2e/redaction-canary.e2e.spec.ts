import path from 'node:path';
import { declareTopology } from '@ratchet/adapters';
import type { RunOutcome } from '@ratchet/contracts';
import { TestStack } from './stack';

/*
 * Canaries: secrets of three kinds — one only the deployment's own pattern (RATCHET_REDACT_PATTERNS)
 * knows, a password written out in prose, and a credential of a well-known shape — placed in a run's
 * input and metadata and in a refused request, are found afterwards in no table of any schema, in no
 * message of any JetStream stream and in no line the services logged (traces: observability.e2e).
 */

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/loop');
const OPERATOR_SECRET = 'ZQCANARY-7F3K9Q2X';
const PROSE_SECRET = 'hunter2canary';
const SHAPED_SECRET = 'sk-live-canaryQ7x9Zp2Lm4Nb8Vc1';
const CANARIES = [OPERATOR_SECRET, PROSE_SECRET, SHAPED_SECRET];
const SCHEMAS = ['orchestrator', 'tools', 'approvals', 'memory', 'gateway'];
const principal = { id: 'alice', roles: ['runner'] };

describe('secrets stay out of every store', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    // Debug logs: the most a service writes about what it handles.
    const env = { RATCHET_REDACT_PATTERNS: JSON.stringify(['ZQCANARY-[A-Z0-9]{8}']), LOG_LEVEL: 'debug' };
    await Promise.all([stack.start('orchestrator', { AGENTS_DIR: AGENTS, ...env }), stack.start('tool-executor', env)]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('finds none of the canaries in Postgres or in the streams after a run and a refused request', async () => {
    const replyTo = `${stack.prefix.subject}-replies.canaries`;
    const sub = stack.nc.subscribe(replyTo, { max: 2 });
    await stack.publishRequest(TENANT, {
      requestId: 'canary-run',
      agent: 'demo',
      input: [
        {
          role: 'user',
          content: `What is the weather in Oslo? My badge is ${OPERATOR_SECRET}, my password: ${PROSE_SECRET}`,
        },
      ],
      metadata: { note: `ticket ${OPERATOR_SECRET}`, key: `use ${SHAPED_SECRET}` },
      principal,
      replyTo,
    });
    await stack.publishRequest(TENANT, {
      requestId: 'canary-refused',
      agent: 'no-such-agent',
      input: [{ role: 'user', content: `${OPERATOR_SECRET} / password = ${PROSE_SECRET} / ${SHAPED_SECRET}` }],
      metadata: { note: OPERATOR_SECRET },
      principal,
      replyTo,
    });
    const outcomes: RunOutcome[] = [];
    for await (const m of sub) outcomes.push(m.json<RunOutcome>());
    expect(outcomes.map((o) => o.status).sort()).toEqual(['completed', 'rejected']);
    // The refusal is recorded (redacted) by the transport right after the reply.
    const sql = stack.orchestratorDb.sql;
    for (let i = 0; i < 50; i++) {
      const rows = await sql.query(`select 1 from ${sql.table('failed_messages')} where reason like '%no-such-agent%'`);
      if (rows.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const stored = await sql.query<{ id: string; type: string; data: unknown }>(
      `select id, type, data from ${sql.table('thread_events')} where tenant_id = ? and type = 'run.requested'`,
      [TENANT],
    );
    // What was redacted is marked, and the rest of the text survives (sealed at rest: opened to look).
    const run = await stack.orchestratorDb.content.openEvents(stored, 'throw');
    expect(JSON.stringify(run)).toContain('My badge is [redacted], my password: [redacted]');

    // Every table of every schema.
    const tables = await sql.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables
        where table_schema in (?) and table_type = 'BASE TABLE'`,
      [SCHEMAS],
    );
    expect(tables.length).toBeGreaterThan(20);
    const inTables: string[] = [];
    for (const { s, t } of tables) {
      const rows = await sql.query(`select x::text as row from "${s}"."${t}" x`);
      const text = JSON.stringify(rows);
      for (const c of CANARIES) if (text.includes(c)) inTables.push(`${s}.${t}: ${c}`);
    }
    expect(inTables).toEqual([]);

    // Every message still in every stream, payload and headers.
    const jsm = await stack.nc.jetstreamManager();
    const topology = declareTopology({ subjectPrefix: stack.prefix.subject, streamPrefix: stack.prefix.stream });
    const inStreams: string[] = [];
    let scanned = 0;
    // The thread feed carries a decision's events in one message: count the events scanned too.
    let eventsScanned = 0;
    for (const spec of topology.streams) {
      const info = await jsm.streams.info(spec.config.name);
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(spec.config.name, { seq }).catch(() => undefined);
        if (!m) continue; // acked off a work queue, or deleted
        scanned++;
        if (spec.role === 'events') eventsScanned += (m.json<{ events?: unknown[] }>().events ?? []).length;
        const text =
          new TextDecoder().decode(m.data) +
          JSON.stringify(m.header ? [...m.header.keys()].map((k) => m.header.get(k)) : []);
        for (const c of CANARIES) if (text.includes(c)) inStreams.push(`${spec.config.name}#${seq}: ${c}`);
      }
    }
    expect(scanned).toBeGreaterThan(2);
    expect(eventsScanned).toBeGreaterThan(5);
    expect(inStreams).toEqual([]);

    // Everything the services wrote, at debug level (the refusal is logged, so the log is not empty).
    const logs = [...stack.services.values()].map((s) => s.logs).join('\n');
    expect(logs).toContain('no-such-agent');
    expect(CANARIES.filter((c) => logs.includes(c))).toEqual([]);
  });
});
