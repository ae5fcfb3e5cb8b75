import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Database } from './orm';
import { openServiceDatabase } from './service-database';
import { inTransaction } from './sql';

let testDb: TestDatabase;
let db: Database;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'tools');
  await db.sql.run(`create table ${db.sql.table('sql_probe')} (id text primary key, n int not null)`);
});
afterAll(async () => {
  await db.close();
  await testDb.drop();
});

const probe = () => db.sql.table('sql_probe');
const ids = async () => (await db.sql.query<{ id: string }>(`select id from ${probe()} order by id`)).map((r) => r.id);

describe('inTransaction (pooled pg client, BEGIN and COMMIT sent along)', () => {
  it('commits when the work resolves and rolls back when it throws', async () => {
    await inTransaction(db.orm, db.schema, (sql) => sql.run(`insert into ${probe()} values (?, ?)`, ['a', 1]));
    await expect(
      inTransaction(db.orm, db.schema, async (sql) => {
        await sql.run(`insert into ${probe()} values (?, ?)`, ['b', 1]);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await ids()).toEqual(['a']);
  });

  it('queryAndCommit returns its own rows and commits in the same round trip; nothing may follow it', async () => {
    const rows = await inTransaction(db.orm, db.schema, async (sql) => {
      await sql.run(`insert into ${probe()} values (?, ?)`, ['c', 1]);
      const out = await sql.queryAndCommit<{ id: string }>(`insert into ${probe()} values (?, ?) returning id`, [
        "d ' ?",
        2,
      ]);
      await expect(sql.query('select 1')).rejects.toThrow(/already committed/);
      return out;
    });
    expect(rows).toEqual([{ id: "d ' ?" }]);
    expect(await ids()).toEqual(['a', 'c', "d ' ?"]);
  });

  it('a failing last statement commits nothing of the transaction, and the connection stays usable', async () => {
    await expect(
      inTransaction(db.orm, db.schema, async (sql) => {
        await sql.run(`insert into ${probe()} values (?, ?)`, ['e', 1]);
        await sql.queryAndCommit(`insert into ${probe()} values (?, ?)`, ['a', 1]); // duplicate key
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await ids()).toEqual(['a', 'c', "d ' ?"]);
    // Every pooled connection still works (none was left inside an aborted transaction).
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => inTransaction(db.orm, db.schema, (sql) => sql.query(`select ${i} as n`))),
    );
  });

  it('the first statement of a transaction can be the one that commits', async () => {
    await inTransaction(db.orm, db.schema, (sql) =>
      sql.queryAndCommit(`insert into ${probe()} values (?, ?)`, ['f', 1]),
    );
    expect(await ids()).toContain('f');
  });

  it('queryPrepared alone is the whole transaction: it commits with the statement, and nothing may follow it', async () => {
    const insert = `insert into ${probe()} values ($1, $2) returning id`;
    const rows = await inTransaction(db.orm, db.schema, async (sql) => {
      const out = await sql.queryPrepared<{ id: string }>('probe_insert', insert, ['g', 1], true);
      await expect(sql.query('select 1')).rejects.toThrow(/already committed/);
      return out;
    });
    expect(rows).toEqual([{ id: 'g' }]);
    expect(await ids()).toContain('g');
  });

  it('queryPrepared after a read commits the open transaction; when it fails nothing of it is committed', async () => {
    const insert = `insert into ${probe()} values ($1, $2)`;
    await inTransaction(db.orm, db.schema, async (sql) => {
      await sql.run(`insert into ${probe()} values (?, ?)`, ['h', 1]);
      await sql.queryPrepared('probe_insert_2', insert, ['i', 1], true);
    });
    expect(await ids()).toEqual(expect.arrayContaining(['h', 'i']));
    await expect(
      inTransaction(db.orm, db.schema, async (sql) => {
        await sql.run(`insert into ${probe()} values (?, ?)`, ['j', 1]);
        await sql.queryPrepared('probe_insert_2', insert, ['a', 1], true); // duplicate key
      }),
    ).rejects.toThrow(/duplicate key/);
    await expect(
      inTransaction(db.orm, db.schema, (sql) => sql.queryPrepared('probe_insert_2', insert, ['a', 1], true)),
    ).rejects.toThrow(/duplicate key/);
    expect(await ids()).not.toContain('j');
  });
});
