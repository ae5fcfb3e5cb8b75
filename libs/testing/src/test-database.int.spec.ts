import { openDatabase, quoteIdent } from '@ratchet/adapters';
import { createTestDatabase, uniquePrefix } from './test-database';
import { newTestDatabaseName, openAdmin, sweepStaleDatabases, testDatabaseCreatedAt } from './template-database';

const adminUrl = () => process.env['DATABASE_URL']!;

async function databaseExists(name: string): Promise<boolean> {
  const admin = await openAdmin(adminUrl());
  try {
    return (await admin.sql.query('select 1 from pg_database where datname = ?', [name])).length === 1;
  } finally {
    await admin.close();
  }
}

describe('createTestDatabase', () => {
  it('gives each caller its own migrated database and drops it', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    try {
      expect(a.name).not.toBe(b.name);
      const dbA = await openDatabase({ url: a.url, schema: 'orchestrator', migrations: [] });
      const dbB = await openDatabase({ url: b.url, schema: 'orchestrator', migrations: [] });
      try {
        await dbA.sql.run(`insert into ${dbA.sql.table('inbox')} (consumer, message_id) values ('c', 'm')`);
        expect(await dbA.sql.query(`select message_id from ${dbA.sql.table('inbox')}`)).toEqual([{ message_id: 'm' }]);
        expect(await dbB.sql.query(`select message_id from ${dbB.sql.table('inbox')}`)).toEqual([]);
      } finally {
        await Promise.all([dbA.close(), dbB.close()]);
      }
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
    expect(await databaseExists(a.name)).toBe(false);
    expect(await databaseExists(b.name)).toBe(false);
  });
});

describe('sweepStaleDatabases', () => {
  it('drops test databases older than an hour and keeps young ones', async () => {
    const old = newTestDatabaseName(Date.now() - 2 * 60 * 60 * 1000);
    const young = newTestDatabaseName();
    expect(testDatabaseCreatedAt(young)).toBeGreaterThan(Date.now() - 5_000);
    const admin = await openAdmin(adminUrl());
    try {
      await admin.sql.run(`create database ${quoteIdent(old)}`);
      await admin.sql.run(`create database ${quoteIdent(young)}`);
      const dropped = await sweepStaleDatabases(adminUrl());
      expect(dropped).toContain(old);
      expect(dropped).not.toContain(young);
      expect(await databaseExists(old)).toBe(false);
      expect(await databaseExists(young)).toBe(true);
    } finally {
      await admin.sql.run(`drop database if exists ${quoteIdent(old)}`);
      await admin.sql.run(`drop database if exists ${quoteIdent(young)}`);
      await admin.close();
    }
  });
});

describe('uniquePrefix', () => {
  it('returns a fresh subject prefix and its uppercase stream prefix', () => {
    const a = uniquePrefix();
    const b = uniquePrefix();
    expect(a.subject).toMatch(/^t[0-9a-f]{10}$/);
    expect(a.stream).toBe(a.subject.toUpperCase());
    expect(a.subject).not.toBe(b.subject);
  });
});
