import { spawn } from 'node:child_process';
import path from 'node:path';
import {
  PgThreadStore,
  connectNats,
  declareTopology,
  deleteTopology,
  openServiceDatabase,
  quoteIdent,
  type Database,
} from '@ratchet/adapters';
import { decodeThreadEvent } from '@ratchet/contracts';
import {
  createTestDatabase,
  databaseUrl,
  newTestDatabaseName,
  openAdmin,
  testDatabaseKey,
  uniquePrefix,
  type TestDatabase,
  demoRunEvents,
} from '@ratchet/testing';

/*
 * Runs the real `ratchet` binary as a child process, against a database and a subject prefix of its own.
 * `ratchet demo` is covered by the end-to-end suite (it needs every service running).
 */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAIN = path.join(ROOT, 'apps', 'cli', 'src', 'main.ts');
const ESC = '\u001b[';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function ratchet(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=ratchet-src', '-r', '@swc-node/register', MAIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json'), RATCHET_DEBUG: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const lines = (text: string) => text.split('\n').filter((l) => l !== '');
const adminUrl = () => process.env['DATABASE_URL']!;

describe('ratchet migrate', () => {
  const prefix = uniquePrefix();
  // Named like a test database, so the sweeper removes it should this file crash before dropping it.
  const name = newTestDatabaseName();
  const url = databaseUrl(adminUrl(), name);
  const env = { DATABASE_URL: url, RATCHET_SUBJECT_PREFIX: prefix.subject, RATCHET_STREAM_PREFIX: prefix.stream };

  afterAll(async () => {
    const nc = await connectNats({ url: process.env['NATS_URL']!, name: 'cli-int-cleanup' });
    try {
      await deleteTopology(
        await nc.jetstreamManager(),
        declareTopology({ subjectPrefix: prefix.subject, streamPrefix: prefix.stream }),
      );
    } finally {
      await nc.close();
    }
    const admin = await openAdmin(adminUrl());
    try {
      await admin.sql.run(`drop database if exists ${quoteIdent(name)} with (force)`);
    } finally {
      await admin.close();
    }
  });

  it('creates the database, applies every schema and creates the topology', async () => {
    const run = await ratchet(['migrate', '--json'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(run.stdout) as {
      database: { name: string; created: boolean };
      schemas: { service: string; applied: string[]; total: number }[];
      topology: { streams: Record<string, string>; consumers: Record<string, string> };
    };
    expect(report.database).toMatchObject({ name, created: true });
    expect(report.schemas.map((s) => s.service)).toEqual(['orchestrator', 'tools', 'gateway', 'approvals', 'memory']);
    for (const schema of report.schemas) {
      expect(schema.total).toBeGreaterThan(0);
      expect(schema.applied).toHaveLength(schema.total);
    }
    expect(Object.keys(report.topology.streams)).toEqual(
      ['REQUESTS', 'INBOX', 'COMMANDS', 'EVENTS'].map((s) => `${prefix.stream}_${s}`),
    );
    expect(new Set([...Object.values(report.topology.streams), ...Object.values(report.topology.consumers)])).toEqual(
      new Set(['created']),
    );
  });

  it('is idempotent: a second run applies nothing and changes nothing', async () => {
    const run = await ratchet(['migrate'], env);
    expect(run.code).toBe(0);
    const out = lines(run.stdout);
    expect(out[0]).toMatch(new RegExp(`^database +${name} +exists`));
    expect(out.filter((l) => l.startsWith('schema '))).toHaveLength(5);
    expect(out.filter((l) => l.startsWith('schema ')).every((l) => / up to date \(\d+ migrations?\)$/.test(l))).toBe(
      true,
    );
    const bus = out.filter((l) => l.startsWith('stream ') || l.startsWith('consumer '));
    const declared = declareTopology({ subjectPrefix: prefix.subject, streamPrefix: prefix.stream });
    expect(bus).toHaveLength(declared.streams.length + declared.consumers.length);
    expect(bus.every((l) => l.endsWith(' unchanged'))).toBe(true);
    expect(out.at(-1)).toContain('5 schemas migrated, 0 migrations applied');
    expect(run.stdout).not.toContain(ESC);
  });

  it('migrates one service schema when asked, without touching NATS', async () => {
    const run = await ratchet(['migrate', '--service', 'gateway', '--no-topology', '--json'], env);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { schemas: { service: string; applied: string[] }[]; topology?: unknown };
    expect(report.schemas).toEqual([expect.objectContaining({ service: 'gateway', applied: [] })]);
    expect(report.topology).toBeUndefined();
  });
});

describe('ratchet events', () => {
  const threadId = 'th_CliIntThread0000000001';
  const runId = 'run_CliIntRun000000000001';
  const events = demoRunEvents('demo', threadId, runId);
  let testDb: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = await openServiceDatabase(testDb.url, 'orchestrator', 2, testDatabaseKey());
    const store = new PgThreadStore(db, () => ({ status: 'idle', agent: null, activeRunId: null }));
    await store.transaction((tx) => tx.appendEvents('demo', threadId, 0, events));
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it('prints a readable timeline of the thread from Postgres', async () => {
    const run = await ratchet(['events', threadId], { DATABASE_URL: testDb.url });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const out = lines(run.stdout);
    expect(out[0]).toBe(`thread ${threadId} · tenant demo · v1–v14 · 14 events`);
    expect(out.slice(1)).toHaveLength(events.length);
    expect(out[1]).toMatch(
      /^v1 +09:14:03\.120 {2}thread\.created +by key:demo-local trace 4bf92f3577b34da6a3ce929d0e0e4736$/,
    );
    expect(out).toContain(`v3   09:14:03.120  run.started       run ${runId} (agent demo v1)`);
    expect(out).toContain('v6   09:14:33.125  model.requested   RETRY step 1 attempt 2');
    expect(out).toContain(
      'v7   09:14:33.139  model.responded   step 1 → 2 tool calls: demo.weather(city=Oslo), demo.weather(city=Rome)',
    );
    expect(out).toContain(
      `v8   09:14:33.139    tool.requested  demo.weather call_1_1 key …:${runId}:1:call_1_1 [ledger: none]`,
    );
    expect(out).toContain(
      'v11  09:14:33.154    tool.completed  call_1_1 → {"city":"Oslo","forecast":"light rain, 14°C"}',
    );
    expect(out.at(-1)).toMatch(/^v14 +09:14:33\.167 {2}run\.completed +"Here is what I found: .*…" after 2 steps$/);
    expect(run.stdout).not.toContain(ESC); // not a TTY: no colour
  });

  it('prints one JSON event per line with --json, equal to what was appended', async () => {
    const run = await ratchet(['--json', 'events', threadId, '--database-url', testDb.url]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const parsed = lines(run.stdout).map((l) => decodeThreadEvent(JSON.parse(l)));
    expect(parsed).toEqual(events);
  });

  it('starts at --from', async () => {
    const run = await ratchet(['events', threadId, '--from', '12', '--json'], { DATABASE_URL: testDb.url });
    expect(run.code).toBe(0);
    expect(lines(run.stdout).map((l) => (JSON.parse(l) as { version: number }).version)).toEqual([12, 13, 14]);
  });

  it('answers as if the thread did not exist in another tenant', async () => {
    const run = await ratchet(['events', threadId, '--tenant', 'other'], { DATABASE_URL: testDb.url });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`ratchet: thread ${threadId} has no events in tenant other\n`);
  });
});

describe('ratchet errors and exit codes', () => {
  it('exits 78 naming the variable when DATABASE_URL is not a postgres URL', async () => {
    const run = await ratchet(['events', 'th_1'], { DATABASE_URL: 'mysql://x' });
    expect(run.code).toBe(78);
    expect(run.stdout).toBe('');
    expect(lines(run.stderr)).toHaveLength(1); // one line, no stack
    expect(run.stderr).toMatch(
      /^ratchet: invalid configuration: DATABASE_URL: expected a postgres:\/\/ URL, got "mysql:\/\/x"$/m,
    );

    const json = await ratchet(['migrate', '--json'], { DATABASE_URL: 'mysql://x' });
    expect(json.code).toBe(78);
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: 'config.invalid', message: expect.stringContaining('DATABASE_URL') },
    });
  });

  it('exits 2 on a usage error and 0 on --help', async () => {
    const [missing, badFrom, unknown, help] = await Promise.all([
      ratchet(['events']),
      ratchet(['events', 'th_1', '--from', 'zero']),
      ratchet(['migrat']),
      ratchet(['--help']),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'threadId'");
    expect(badFrom.code).toBe(2);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Did you mean migrate?');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:');
  });
});
