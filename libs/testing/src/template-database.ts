import { createHash, randomUUID } from 'node:crypto';
import { SERVICE_SCHEMAS, openDatabase, openServiceDatabase, quoteIdent, type Database } from '@ratchet/adapters';

export const TEST_DATABASE_PREFIX = 'ratchet_t_';
export const TEMPLATE_PREFIX = 'ratchet_test_tpl_';
const STALE_TEST_DATABASE_MS = 60 * 60 * 1000;
const STALE_TEMPLATE_MS = 24 * 60 * 60 * 1000;

/** The same server, another database. */
export function databaseUrl(baseUrl: string, database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A connection for CREATE/DROP DATABASE (which cannot run inside a transaction: autocommit only). */
export function openAdmin(url: string, poolMax = 1): Promise<Database> {
  return openDatabase({ url, schema: 'public', migrations: [], poolMax });
}

/**
 * Named by a hash of every service's migrations (names and code), so a changed or added migration
 * builds a new template instead of reusing a stale one.
 */
export function templateName(): string {
  const hash = createHash('sha256');
  for (const [service, { schema, migrations }] of Object.entries(SERVICE_SCHEMAS)) {
    hash.update(`${service}:${schema}\n`);
    for (const m of migrations) hash.update(`${m.name}\n${String(m)}\n`);
  }
  return `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 12)}`;
}

/**
 * Creates the template database with every service's migrations applied, once per migration set.
 * Serialised by an advisory lock (parallel jest runs share one server); built under a temporary name
 * and renamed when complete, so a crash never leaves a half-migrated template behind.
 */
export async function ensureTemplate(adminUrl: string): Promise<string> {
  await ensureBaseDatabase(adminUrl);
  const name = templateName();
  // Two connections: one holds the lock in an open transaction, the other runs CREATE DATABASE
  // (which refuses to run inside a transaction).
  const admin = await openAdmin(adminUrl, 2);
  try {
    return await admin.orm.em.getConnection().transactional(async (trx) => {
      const conn = admin.orm.em.getConnection();
      await conn.execute("select pg_advisory_xact_lock(hashtext('ratchet:test-template'))", [], 'run', trx);
      if (await databaseExists(admin, name)) return name;
      const wip = `${name}_wip`;
      await admin.sql.run(`drop database if exists ${quoteIdent(wip)} with (force)`);
      await admin.sql.run(`create database ${quoteIdent(wip)}`);
      try {
        for (const service of Object.keys(SERVICE_SCHEMAS) as (keyof typeof SERVICE_SCHEMAS)[]) {
          const db = await openServiceDatabase(databaseUrl(adminUrl, wip), service, 2);
          try {
            await db.migrate();
          } finally {
            await db.close();
          }
        }
        await admin.sql.run(`alter database ${quoteIdent(wip)} rename to ${quoteIdent(name)}`);
        await admin.sql.run(
          `comment on database ${quoteIdent(name)} is ${quoteLiteral(`ratchet test template built ${new Date().toISOString()}`)}`,
        );
      } catch (error) {
        await admin.sql.run(`drop database if exists ${quoteIdent(wip)} with (force)`).catch(() => undefined);
        throw error;
      }
      return name;
    });
  } finally {
    await admin.close();
  }
}

/**
 * Creates the database named in `adminUrl` when the server does not have it yet (a fresh machine, where
 * nothing ran `ratchet migrate` or `npm start` before), from the server's `postgres` database.
 */
export async function ensureBaseDatabase(adminUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(adminUrl).pathname.replace(/^\//, ''));
  if (name === '' || name === 'postgres') return;
  const maintenance = await openAdmin(databaseUrl(adminUrl, 'postgres'));
  try {
    const rows = await maintenance.sql.query<{ n: number }>(
      'select count(*)::int as n from pg_database where datname = ?',
      [name],
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await maintenance.sql.run(`create database ${quoteIdent(name)}`).catch(async (error: unknown) => {
      // Created meanwhile by a parallel run: fine.
      const again = await maintenance.sql.query<{ n: number }>(
        'select count(*)::int as n from pg_database where datname = ?',
        [name],
      );
      if ((again[0]?.n ?? 0) === 0) throw error;
    });
  } finally {
    await maintenance.close();
  }
}

/**
 * Drops what crashed or killed runs left behind: test databases older than an hour that nobody is
 * connected to, and templates of other migration sets unused for a day (another checkout may still
 * be using a younger one).
 */
export async function sweepStaleDatabases(adminUrl: string, now = Date.now()): Promise<string[]> {
  const admin = await openAdmin(adminUrl);
  try {
    const rows = await admin.sql.query<{ datname: string; comment: string | null; connections: number }>(
      `select d.datname, shobj_description(d.oid, 'pg_database') as comment,
         (select count(*)::int from pg_stat_activity a where a.datid = d.oid) as connections
       from pg_database d
       where d.datname like 'ratchet\\_t\\_%' or d.datname like 'ratchet\\_test\\_tpl\\_%'`,
    );
    const current = templateName();
    const dropped: string[] = [];
    for (const row of rows) {
      if (row.connections > 0 || row.datname === current) continue;
      const createdAt = row.datname.startsWith(TEST_DATABASE_PREFIX)
        ? testDatabaseCreatedAt(row.datname)
        : templateBuiltAt(row.comment);
      const maxAge = row.datname.startsWith(TEST_DATABASE_PREFIX) ? STALE_TEST_DATABASE_MS : STALE_TEMPLATE_MS;
      if (createdAt === undefined || now - createdAt < maxAge) continue;
      await admin.sql.run(`drop database if exists ${quoteIdent(row.datname)}`).then(
        () => dropped.push(row.datname),
        () => undefined, // someone connected meanwhile: leave it for a later sweep
      );
    }
    return dropped;
  } finally {
    await admin.close();
  }
}

/** `ratchet_t_<base36 ms>_<random>`: the creation time is in the name, for the sweeper. */
export function newTestDatabaseName(now = Date.now()): string {
  return `${TEST_DATABASE_PREFIX}${now.toString(36)}_${randomToken(8)}`;
}

export function testDatabaseCreatedAt(name: string): number | undefined {
  const m = /^ratchet_t_([0-9a-z]+)_[0-9a-z]+$/.exec(name);
  const ms = m?.[1] ? parseInt(m[1], 36) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

function templateBuiltAt(comment: string | null): number | undefined {
  const m = /built (\S+)$/.exec(comment ?? '');
  const ms = m?.[1] ? Date.parse(m[1]) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** Lowercase hex: valid in database names, NATS subjects and (uppercased) stream names. */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) out += randomUUID().replaceAll('-', '');
  return out.slice(0, length);
}

async function databaseExists(admin: Database, name: string): Promise<boolean> {
  const rows = await admin.sql.query('select 1 from pg_database where datname = ?', [name]);
  return rows.length > 0;
}

function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}
