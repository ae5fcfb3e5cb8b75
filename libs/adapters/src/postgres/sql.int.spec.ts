import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import type { Database } from './orm';
import { openServiceDatabase } from './service-database';
import { inTransaction, numbered, positionalText, sqlExecutor } from './sql';

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

describe('prepared statements (SqlExecutor.prepared)', () => {
  const upsert = () =>
    numbered(
      `${db.schema}.probe_upsert`,
      () =>
        `insert into ${probe()} values (?, ?) on conflict (id) do update set n = ${probe()}.n + excluded.n returning id, n`,
    );

  it('numbers `?` placeholders once per name and refuses identifiers as parameters', () => {
    expect(numbered('probe.numbered', () => 'select ?::int + ?::int as n where ?::text is not null')).toBe(
      'select $1::int + $2::int as n where $3::text is not null',
    );
    // The same name keeps the text it was first given: a name always goes with one statement.
    expect(numbered('probe.numbered', () => 'select 1')).toBe(
      'select $1::int + $2::int as n where $3::text is not null',
    );
    expect(() => numbered('probe.ident', () => 'select ?? from t')).toThrow(/identifiers/);
  });

  it('runs on its own outside a transaction (autocommit), on every pooled connection, with values apart from the text', async () => {
    const rows = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        db.sql.prepared<{ id: string; n: number }>(`${db.schema}.probe_upsert`, upsert(), [`p'${i % 2}`, 1]),
      ),
    );
    expect(rows.every((r) => r.length === 1)).toBe(true);
    const stored = await db.sql.query<{ id: string; n: number }>(
      `select id, n from ${probe()} where id like 'p''%' order by id`,
    );
    expect(stored).toEqual([
      { id: "p'0", n: 3 },
      { id: "p'1", n: 3 },
    ]);
  });

  it('inside a transaction it belongs to the transaction: rolled back with it', async () => {
    await expect(
      inTransaction(db.orm, db.schema, async (sql) => {
        await sql.prepared(`${db.schema}.probe_upsert`, upsert(), ["p'0", 10]);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await db.sql.query(`select n from ${probe()} where id = 'p''0'`)).toEqual([{ n: 3 }]);
  });

  it('in a MikroORM transaction the same text runs with its values bound in order (a number used twice, twice)', async () => {
    expect(positionalText('select $2::int - $1::int + $2::int as n', [1, 5])).toEqual({
      sql: 'select ?::int - ?::int + ?::int as n',
      params: [5, 1, 5],
    });
    expect(() => positionalText('select $3', [1])).toThrow(/\$3 has no value/);
    const rows = await db.orm.em
      .getConnection()
      .transactional((trx) =>
        sqlExecutor(db.orm, db.schema, trx).prepared<{ n: number }>(
          'unused',
          'select $2::int - $1::int + $2::int as n',
          [1, 5],
        ),
      );
    expect(rows).toEqual([{ n: 9 }]);
  });
});
