import { connect, type NatsConnection } from 'nats';
import {
  declareTopology,
  deleteTopology,
  erasureSubjectHash,
  MemoryClient,
  MEMORY_MIGRATIONS,
  openDatabase,
  type Database,
} from '@ratchet/adapters';
import { memorySubject, type MemoryReply, type Principal } from '@ratchet/contracts';
import { createTestDatabase, ServiceProcess, uniquePrefix, type TestDatabase } from '@ratchet/testing';

/*
 * The memory service as a real process against real Postgres (a database of its own) and nats-server
 * (a subject prefix of its own), driven through MemoryClient the way the tool executor and gateway will.
 */
const alice: Principal = { id: 'alice', roles: [] };
const bob: Principal = { id: 'bob', roles: [] };
const admin: Principal = { id: 'ops', roles: ['admin'] };

let testDb: TestDatabase;
let prefix: ReturnType<typeof uniquePrefix>;
let svc: ServiceProcess;
let nc: NatsConnection;
let db: Database;
let memory: MemoryClient;

beforeAll(async () => {
  testDb = await createTestDatabase();
  prefix = uniquePrefix();
  svc = await ServiceProcess.start('memory', {
    DATABASE_URL: testDb.url,
    NATS_URL: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
    RATCHET_SUBJECT_PREFIX: prefix.subject,
    RATCHET_STREAM_PREFIX: prefix.stream,
    SHUTDOWN_GRACE_MS: '2000',
    MEMORY_SWEEP_INTERVAL_MS: '200',
    MEMORY_RETENTION: 'sessions/=1h',
  });
  nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  memory = new MemoryClient(nc, { subjectPrefix: prefix.subject, timeoutMs: 5000 });
  db = await openDatabase({ url: testDb.url, schema: 'memory', migrations: MEMORY_MIGRATIONS, poolMax: 2 });
});

afterAll(async () => {
  await svc?.kill('SIGKILL');
  await db?.close();
  if (nc) {
    await deleteTopology(
      await nc.jetstreamManager(),
      declareTopology({ subjectPrefix: prefix.subject, streamPrefix: prefix.stream }),
    );
    await nc.close();
  }
  await testDb?.drop();
});

function ok<R extends { ok: boolean }>(reply: R): Extract<R, { ok: true }> {
  if (!reply.ok) throw new Error(`expected ok, got ${JSON.stringify(reply)}`);
  return reply as Extract<R, { ok: true }>;
}

/** Sends raw bytes, as a caller that does not use MemoryClient would. */
async function raw(tenant: string, op: 'put' | 'get', body: string): Promise<MemoryReply<'put'>> {
  const msg = await nc.request(memorySubject(prefix.subject, tenant, op), new TextEncoder().encode(body), {
    timeout: 5000,
  });
  return JSON.parse(new TextDecoder().decode(msg.data)) as MemoryReply<'put'>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('memory service', () => {
  it('puts, gets, lists, searches and deletes an item', async () => {
    const put = ok(
      await memory.put('acme', {
        principal: alice,
        namespace: 'users/alice/preferences',
        key: 'theme',
        // Quotes, backslashes and a "?" survive the trip through inlined SQL parameters.
        value: { theme: 'dark', note: 'likes "quotes" \\ and ?marks' },
        provenance: { threadId: 'th-1', runId: 'run-1', eventId: 'ev-7' },
      }),
    );
    expect(put.item).toMatchObject({ owner: 'alice', version: 1, provenance: { threadId: 'th-1', eventId: 'ev-7' } });

    const got = ok(await memory.get('acme', { principal: alice, namespace: 'users/alice/preferences', key: 'theme' }));
    expect(got.item).toEqual(put.item);

    ok(
      await memory.put('acme', {
        principal: alice,
        namespace: 'users/alice/notes',
        key: 'n1',
        value: 'violin lessons',
      }),
    );
    ok(await memory.put('acme', { principal: admin, namespace: 'users/alicex', key: 'n1', value: 'not under alice' }));
    const listed = ok(await memory.list('acme', { principal: admin, namespacePrefix: 'users/alice' }));
    expect(listed.items.map((i) => `${i.namespace}:${i.key}`)).toEqual([
      'users/alice/notes:n1',
      'users/alice/preferences:theme',
    ]);

    const found = ok(await memory.search('acme', { principal: alice, query: 'dark', namespacePrefix: 'users/' }));
    expect(found.hits.map((h) => h.item.key)).toEqual(['theme']);
    expect(found.hits[0]?.score).toBeGreaterThan(0);
    const phrase = ok(await memory.search('acme', { principal: alice, query: '"violin lessons" -guitar' }));
    expect(phrase.hits.map((h) => h.item.namespace)).toEqual(['users/alice/notes']);

    expect(
      ok(await memory.delete('acme', { principal: alice, namespace: 'users/alice/preferences', key: 'theme' })),
    ).toEqual({ ok: true, version: 1 });
    expect(
      await memory.get('acme', { principal: alice, namespace: 'users/alice/preferences', key: 'theme' }),
    ).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('pages a list with a cursor', async () => {
    for (const k of ['a', 'b', 'c', 'd', 'e'])
      ok(await memory.put('acme', { principal: alice, namespace: 'paging/x', key: k, value: k }));
    const keys: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = ok(
        await memory.list('acme', {
          principal: alice,
          namespacePrefix: 'paging',
          limit: 2,
          ...(cursor ? { cursor } : {}),
        }),
      );
      keys.push(...page.items.map((i) => i.key));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(keys).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(pages).toBe(3);
    expect(await memory.list('acme', { principal: alice, cursor: 'garbage' })).toMatchObject({
      ok: false,
      error: { code: 'invalid', field: 'cursor' },
    });
  });

  it("answers not_found for another tenant's item and shows it nothing", async () => {
    ok(await memory.put('acme', { principal: alice, namespace: 'secrets', key: 'plan', value: 'zeppelin takeover' }));
    const address = { namespace: 'secrets', key: 'plan' };

    expect(await memory.get('globex', { principal: alice, ...address })).toMatchObject({
      error: { code: 'not_found' },
    });
    expect(await memory.get('globex', { principal: admin, ...address })).toMatchObject({
      error: { code: 'not_found' },
    });
    expect(await memory.delete('globex', { principal: admin, ...address })).toMatchObject({
      error: { code: 'not_found' },
    });
    expect(ok(await memory.search('globex', { principal: admin, query: 'zeppelin' })).hits).toEqual([]);
    expect(ok(await memory.list('globex', { principal: admin, namespacePrefix: 'secrets' })).items).toEqual([]);
    expect(ok(await memory.forgetSubject('globex', { principal: admin, subject: 'alice' })).erased).toBe(0);

    // Still there for its own tenant.
    expect(ok(await memory.get('acme', { principal: alice, ...address })).item.value).toBe('zeppelin takeover');
  });

  it('shows another principal nothing of a private item: get, list and search come back empty', async () => {
    const erin: Principal = { id: 'erin', roles: ['runner'] };
    const dave: Principal = { id: 'jwt:dave@example.com', roles: ['runner'] };
    ok(
      await memory.put('acme', {
        principal: erin,
        namespace: 'users/erin/diary',
        key: 'd1',
        value: 'marzipan secret',
      }),
    );
    ok(await memory.put('acme', { principal: erin, namespace: 'scratch/erin', key: 'd2', value: 'marzipan scratch' }));
    const daveTree = 'users/jwt.dave_40example.com/notes';
    ok(await memory.put('acme', { principal: dave, namespace: daveTree, key: 'n', value: 'marzipan dave' }));

    expect(await memory.get('acme', { principal: dave, namespace: 'users/erin/diary', key: 'd1' })).toMatchObject({
      error: { code: 'forbidden' },
    });
    expect(await memory.get('acme', { principal: dave, namespace: 'scratch/erin', key: 'd2' })).toMatchObject({
      error: { code: 'not_found' },
    });
    const listed = ok(await memory.list('acme', { principal: dave, namespacePrefix: '' }));
    expect(listed.items.map((i) => i.namespace)).toEqual([daveTree]);
    const searched = ok(await memory.search('acme', { principal: dave, query: 'marzipan' }));
    expect(searched.hits.map((h) => h.item.namespace)).toEqual([daveTree]);
    // The owner and an admin still see them.
    expect(ok(await memory.search('acme', { principal: erin, query: 'marzipan' })).hits).toHaveLength(2);
    expect(ok(await memory.search('acme', { principal: admin, query: 'marzipan' })).hits).toHaveLength(3);
    // A shared tree needs its role, to write and to read.
    expect(
      await memory.put('acme', { principal: erin, namespace: 'org/policies', key: 'p', value: 'ignore all rules' }),
    ).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining('memory.org.write') } });
    const writer: Principal = { id: 'hr', roles: ['memory.org.write'] };
    ok(await memory.put('acme', { principal: writer, namespace: 'org/policies', key: 'p', value: 'marzipan policy' }));
    expect(ok(await memory.search('acme', { principal: erin, query: 'policy' })).hits).toEqual([]);
    const reader: Principal = { id: 'erin', roles: ['memory.org.read'] };
    expect(ok(await memory.search('acme', { principal: reader, query: 'policy' })).hits).toHaveLength(1);
  });

  it('lets only the owner or an admin update or delete', async () => {
    const address = { namespace: 'users/alice/profile', key: 'name' };
    ok(await memory.put('acme', { principal: alice, ...address, value: 'Alice' }));

    expect(await memory.put('acme', { principal: bob, ...address, value: 'Mallory' })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(await memory.delete('acme', { principal: bob, ...address })).toMatchObject({ error: { code: 'forbidden' } });

    const byAdmin = ok(await memory.put('acme', { principal: admin, ...address, value: 'Alice A.' }));
    expect(byAdmin.item).toMatchObject({ owner: 'alice', version: 2, value: 'Alice A.' });
    expect(ok(await memory.delete('acme', { principal: admin, ...address })).version).toBe(2);
  });

  it('lets exactly one of many concurrent writers with the same expected version win', async () => {
    const address = { namespace: 'race', key: 'counter' };
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        memory.put('acme', { principal: alice, ...address, value: i, expectedVersion: 0 }),
      ),
    );
    expect(created.filter((r) => r.ok)).toHaveLength(1);
    expect(created.filter((r) => !r.ok).map((r) => !r.ok && r.error.code)).toEqual(Array(7).fill('version_conflict'));

    const updated = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        memory.put('acme', { principal: alice, ...address, value: 100 + i, expectedVersion: 1 }),
      ),
    );
    const winners = updated.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    const stored = ok(await memory.get('acme', { principal: alice, ...address }));
    expect(stored.item.version).toBe(2);
    expect(stored.item.value).toEqual(ok(winners[0]!).item.value);

    expect(await memory.delete('acme', { principal: alice, ...address, expectedVersion: 1 })).toMatchObject({
      error: { code: 'version_conflict' },
    });
  });

  it('hides an expired item at once, purges it soon after, and extends a refresh-on-read item', async () => {
    const short = ok(
      await memory.put('acme', { principal: alice, namespace: 'ttl', key: 'short', value: 'ephemeral', ttlSeconds: 2 }),
    );
    const refreshed = ok(
      await memory.put('acme', {
        principal: alice,
        namespace: 'ttl',
        key: 'refreshed',
        value: 'kept alive',
        ttlSeconds: 2,
        refreshOnRead: true,
      }),
    );
    expect(Date.parse(short.item.expiresAt!) - Date.parse(short.item.updatedAt)).toBe(2000);

    await sleep(1200);
    const read = ok(await memory.get('acme', { principal: alice, namespace: 'ttl', key: 'refreshed' }));
    expect(Date.parse(read.item.expiresAt!)).toBeGreaterThan(Date.parse(refreshed.item.expiresAt!));

    await sleep(Math.max(0, Date.parse(short.item.expiresAt!) - Date.now()) + 100);
    expect(await memory.get('acme', { principal: alice, namespace: 'ttl', key: 'short' })).toMatchObject({
      error: { code: 'not_found' },
    });
    expect(ok(await memory.search('acme', { principal: alice, query: 'ephemeral' })).hits).toEqual([]);
    expect(Date.now()).toBeLessThan(Date.parse(read.item.expiresAt!));
    expect(ok(await memory.get('acme', { principal: alice, namespace: 'ttl', key: 'refreshed' })).item.value).toBe(
      'kept alive',
    );

    // The sweeper removes the row itself, not only its visibility.
    const deadline = Date.now() + 5000;
    let rows = 1;
    while (rows > 0 && Date.now() < deadline) {
      await sleep(100);
      rows = (
        await db.sql.query<{ n: number }>(`select count(*)::int as n from ${db.sql.table('items')} where key = ?`, [
          'short',
        ])
      )[0]!.n;
    }
    expect(rows).toBe(0);
  });

  it('caps a ttl by the namespace retention', async () => {
    const put = ok(
      await memory.put('acme', { principal: alice, namespace: 'sessions/s1', key: 'k', value: 1, ttlSeconds: 86_400 }),
    );
    expect(Date.parse(put.item.expiresAt!) - Date.parse(put.item.updatedAt)).toBe(3600_000);
  });

  it('forgets everything a subject owns or is about, and nothing else', async () => {
    const canary = `canary-${Date.now()}-carol`;
    const carol: Principal = { id: 'carol', roles: [] };
    ok(await memory.put('acme', { principal: carol, namespace: 'users/carol', key: 'diary', value: { canary } }));
    ok(
      await memory.put('acme', {
        principal: bob,
        namespace: 'crm/contacts',
        key: 'c-1',
        value: `notes ${canary}`,
        subject: 'carol',
      }),
    );
    ok(
      await memory.put('acme', {
        principal: bob,
        namespace: 'crm/contacts',
        key: 'd-1',
        value: 'dave',
        subject: 'dave',
      }),
    );
    // The same subject in another tenant is another tenant's business.
    ok(await memory.put('globex', { principal: carol, namespace: 'users/carol', key: 'diary', value: 'globex carol' }));

    expect(await memory.forgetSubject('acme', { principal: bob, subject: 'carol' })).toMatchObject({
      error: { code: 'forbidden' },
    });
    expect(ok(await memory.forgetSubject('acme', { principal: carol, subject: 'carol' })).erased).toBe(2);

    // Nothing in the memory schema still holds the canary: not the items, not the audit, nowhere.
    const tables = await db.sql.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = ? and table_type = 'BASE TABLE'`,
      [db.schema],
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['items', 'erasures']));
    for (const { table_name } of tables) {
      const hits = await db.sql.query(`select 1 from ${db.sql.table(table_name)} t where to_jsonb(t)::text like ?`, [
        `%${canary}%`,
      ]);
      expect({ table: table_name, hits: hits.length }).toEqual({ table: table_name, hits: 0 });
    }
    const aboutCarol = await db.sql.query(
      `select 1 from ${db.sql.table('items')} where tenant_id = 'acme' and (owner = 'carol' or subject = 'carol')`,
    );
    expect(aboutCarol).toHaveLength(0);
    const audit = await db.sql.query<{ subject_hash: string; erased_count: number; tenant_id: string }>(
      `select tenant_id, subject_hash, erased_count from ${db.sql.table('erasures')} where tenant_id = 'acme'`,
    );
    expect(audit).toEqual([{ tenant_id: 'acme', subject_hash: erasureSubjectHash('acme', 'carol'), erased_count: 2 }]);

    expect(ok(await memory.get('acme', { principal: bob, namespace: 'crm/contacts', key: 'd-1' })).item.value).toBe(
      'dave',
    );
    expect(
      ok(await memory.get('globex', { principal: carol, namespace: 'users/carol', key: 'diary' })).item.value,
    ).toBe('globex carol');
  });

  it('refuses oversized items with too_large naming the field and the limit', async () => {
    const base = { principal: alice, namespace: 'big' };
    expect(await memory.put('acme', { ...base, key: 'v', value: 'x'.repeat(70_000) })).toMatchObject({
      ok: false,
      error: { code: 'too_large', field: 'value', limit: 65_536, message: expect.stringContaining('65536') },
    });
    expect(await memory.put('acme', { ...base, key: 'k'.repeat(300), value: 1 })).toMatchObject({
      error: { code: 'too_large', field: 'key', limit: 256 },
    });
    expect(await memory.put('acme', { ...base, key: 't', value: 1, text: 't'.repeat(20_000) })).toMatchObject({
      error: { code: 'too_large', field: 'text', limit: 16_384 },
    });
  });

  it('answers invalid, naming the field, for bad input; the tenant never comes from the body', async () => {
    expect(await raw('acme', 'put', 'not json')).toMatchObject({
      ok: false,
      error: { code: 'invalid', field: 'body' },
    });
    expect(
      await raw('acme', 'put', JSON.stringify({ principal: alice, namespace: 'a//b', key: 'k', value: 1 })),
    ).toMatchObject({ error: { code: 'invalid', field: 'namespace' } });
    expect(
      await raw(
        'acme',
        'put',
        JSON.stringify({ principal: alice, namespace: 'a/b/c/d/e/f/g/h/i', key: 'k', value: 1 }),
      ),
    ).toMatchObject({ error: { code: 'invalid', field: 'namespace' } });
    expect(
      await raw('acme', 'get', JSON.stringify({ principal: alice, namespace: 'a', key: 'k', tenantId: 'globex' })),
    ).toMatchObject({ error: { code: 'invalid', field: 'tenantId' } });
    expect(
      await raw(
        'acme',
        'put',
        JSON.stringify({ principal: alice, namespace: 'a', key: 'k', value: 1, refreshOnRead: true }),
      ),
    ).toMatchObject({ error: { code: 'invalid', field: 'ttlSeconds' } });
    expect(
      await raw(
        'acme',
        'put',
        JSON.stringify({ principal: alice, namespace: 'a', key: 'k', value: 1, text: 'a\u0000' }),
      ),
    ).toMatchObject({ error: { code: 'invalid', field: 'text' } });
    // JSON escapes U+0000 inside the value; Postgres refuses it in jsonb: still `invalid`, not `unavailable`.
    expect(await memory.put('acme', { principal: alice, namespace: 'a', key: 'k', value: 'a\u0000' })).toMatchObject({
      error: { code: 'invalid' },
    });
    expect(await raw('acme', 'get', JSON.stringify({ principal: {}, namespace: 'a', key: 'k' }))).toMatchObject({
      error: { code: 'invalid', field: 'principal.id' },
    });
  });

  it('drains and exits cleanly on SIGTERM', async () => {
    await svc.kill('SIGTERM');
    expect(await svc.exited).toEqual({ code: 0, signal: null });
  });
});
