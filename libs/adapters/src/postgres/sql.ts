import type { MikroORM, Transaction } from '@mikro-orm/core';

/**
 * Raw SQL against one service's schema, optionally inside a transaction. Placeholders are `?` (values)
 * and `??` (identifiers); MikroORM escapes and inlines them client-side, so an array value expands to
 * `a, b, c` (write `IN (?)`, or `ARRAY[?]::text[]`) and JSON must be passed as a string cast `?::jsonb`.
 */
export interface SqlExecutor {
  readonly schema: string;
  /** `"schema"."name"`: table names are always schema-qualified, never left to the search_path. */
  table(name: string): string;
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs a statement and returns the number of rows it affected. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * A hot statement as a named prepared statement: `$1`… parameters sent apart from the text, parsed and
   * planned once per connection. `name` must always go with the same text (derive it from the schema).
   * Outside a transaction the statement runs on its own (autocommit: atomic, one round trip).
   */
  prepared<R = Record<string, unknown>>(name: string, text: string, values: readonly unknown[]): Promise<R[]>;
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `(?, ?), (?, ?)`: one multi-row VALUES list, so a batch costs one round trip. */
export function valuesList(rows: number, row: string): string {
  return Array.from({ length: rows }, () => row).join(', ');
}

/**
 * `sent_at is null` for a lookup by id, written so that the planner cannot answer it from
 * `outbox_unsent_idx`: a row marked sent leaves its entry in that partial index until vacuum, so a scan of
 * it walks every entry left since (hundreds between vacuums, at any load) where one primary-key probe per
 * id does. A row's `sent_at` is never `infinity`.
 */
export const UNSENT_BY_ID = `coalesce(sent_at, 'infinity') = 'infinity'`;

/**
 * A data-modifying CTE `name` that marks outbox rows sent: those whose ids the JSON array parameter
 * `param` (`$11`, or `?`) names, published after earlier commits, so a statement that commits anyway
 * carries their marks (ADR 0006). One primary-key probe per id, in a generic plan too (none with no ids).
 */
export function markSentCte(sql: SqlExecutor, name: string, param: string): string {
  return `${name} as (
  update ${sql.table('outbox')} set sent_at = now(), attempts = attempts + 1
   where id = any(array(select jsonb_array_elements_text(${param}::jsonb))) and ${UNSENT_BY_ID}
  returning 1)`;
}

/** A pooled pg client as knex hands it out (MikroORM's type parsers already set on it). */
interface PooledClient {
  query(text: string): Promise<PgResult | PgResult[]>;
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<PgResult>;
  __knex__disposed?: unknown;
}
interface PgResult {
  rows: unknown[];
  rowCount: number | null;
}
interface ConnectionPool {
  acquireConnection(): Promise<PooledClient>;
  releaseConnection(client: PooledClient): Promise<void>;
}

function poolOf(orm: MikroORM): ConnectionPool {
  return (orm.em.getConnection() as unknown as { getKnex(): { client: ConnectionPool } }).getKnex().client;
}

/** The last result of a (possibly multi-statement) simple query. */
function lastResult(result: PgResult | PgResult[]): PgResult {
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  if (!last) throw new Error('the query returned no result');
  return last;
}

/**
 * Statements go straight to a pooled pg client (text inlined by MikroORM's platform, exactly as its own
 * `execute` does), skipping the query builder on the hot path: a statement costs about half the CPU.
 */
/** Statement text with `?`/`??` inlined, escaped by MikroORM's platform. */
function statementText(orm: MikroORM, sql: string, params: readonly unknown[]): string {
  return params.length > 0 ? orm.em.getPlatform().formatQuery(sql, params) : sql;
}

function rawExecutor(
  orm: MikroORM,
  schema: string,
  send: (text: string) => Promise<PgResult>,
  sendPrepared: (name: string, text: string, values: readonly unknown[]) => Promise<PgResult>,
): SqlExecutor {
  const text = (sql: string, params: readonly unknown[]) => statementText(orm, sql, params);
  return {
    schema,
    table: (name) => `${quoteIdent(schema)}.${quoteIdent(name)}`,
    query: async <R>(sql: string, params: readonly unknown[] = []) => (await send(text(sql, params))).rows as R[],
    run: async (sql: string, params: readonly unknown[] = []) => (await send(text(sql, params))).rowCount ?? 0,
    prepared: async <R>(name: string, sql: string, values: readonly unknown[]) =>
      (await sendPrepared(name, sql, values)).rows as R[],
  };
}

/**
 * A statement written with `?` placeholders (values only, no `??`) numbered `$1`, `$2`… in order: the
 * text of a prepared statement (see SqlExecutor.prepared). Computed once per name and kept.
 */
const numberedTexts = new Map<string, string>();
export function numbered(name: string, build: () => string): string {
  let text = numberedTexts.get(name);
  if (text === undefined) {
    const source = build();
    if (source.includes('??')) throw new Error(`statement ${name}: identifiers (??) cannot be parameters`);
    let n = 0;
    text = source.replace(/\?/g, () => `$${++n}`);
    numberedTexts.set(name, text);
  }
  return text;
}

/**
 * `$1`… placeholders as `?` with the values in the order they appear (a number used twice is bound
 * twice): a prepared statement's text run where only `?` binds (a MikroORM transaction).
 */
export function positionalText(text: string, values: readonly unknown[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= values.length) throw new Error(`statement parameter $${n} has no value`);
    params.push(values[i]);
    return '?';
  });
  return { sql, params };
}

/** A transaction's executor: statements, and a last statement that carries the commit along. */
export interface TransactionSql extends SqlExecutor {
  /**
   * Runs the transaction's last statement with `COMMIT` in the same round trip and returns its rows.
   * When it fails nothing is committed (the transaction rolls back); no statement may follow it.
   */
  queryAndCommit<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Runs a named prepared statement (`$1`… parameters; parsed and planned once per connection). With
   * `commit`, the transaction ends with it: when it is the transaction's first statement it runs on its
   * own (autocommit: atomic, one round trip); otherwise a COMMIT follows it. No statement may follow a
   * committing one.
   */
  queryPrepared<R = Record<string, unknown>>(
    name: string,
    text: string,
    values: readonly unknown[],
    commit?: boolean,
  ): Promise<R[]>;
}

/**
 * Runs `work` in one transaction on one pooled connection; commits when it resolves, rolls back when it
 * throws. `BEGIN` travels with the first statement and `COMMIT` may travel with the last
 * (`queryAndCommit`), so a transaction of two statements costs two round trips; a transaction that
 * runs no statement sends nothing at all.
 */
export async function inTransaction<T>(
  orm: MikroORM,
  schema: string,
  work: (sql: TransactionSql) => Promise<T>,
): Promise<T> {
  const pool = poolOf(orm);
  const client = await pool.acquireConnection();
  let begun = false;
  let committed = false;
  const send = async (text: string, commit = false): Promise<PgResult> => {
    if (committed) throw new Error('the transaction has already committed');
    const statements = `${begun ? '' : 'begin;\n'}${text}${commit ? ';\ncommit' : ''}`;
    begun = true;
    const result = await client.query(statements);
    if (!commit) return lastResult(result);
    committed = true;
    // [begin,] the statement, commit: the statement's result is the one before the commit.
    const results = Array.isArray(result) ? result : [result];
    const own = results[results.length - 2];
    if (!own) throw new Error('the query returned no result');
    return own;
  };
  const prepared = async (name: string, text: string, values: readonly unknown[], commit: boolean) => {
    if (committed) throw new Error('the transaction has already committed');
    if (commit && !begun) {
      // The whole transaction is this one statement: on its own it is atomic, and committed when it returns.
      begun = true;
      committed = true;
      return client.query({ name, text, values });
    }
    if (!begun) await client.query('begin');
    begun = true;
    const result = await client.query({ name, text, values });
    if (commit) {
      await client.query('commit');
      committed = true;
    }
    return result;
  };
  const sql: TransactionSql = {
    ...rawExecutor(
      orm,
      schema,
      (text) => send(text),
      (name, text, values) => prepared(name, text, values, false),
    ),
    queryAndCommit: async <R>(text: string, params: readonly unknown[] = []) =>
      (await send(statementText(orm, text, params), true)).rows as R[],
    queryPrepared: async <R>(name: string, text: string, values: readonly unknown[], commit = false) =>
      (await prepared(name, text, values, commit)).rows as R[],
  };
  try {
    const result = await work(sql);
    if (begun && !committed) await client.query('commit');
    return result;
  } catch (error) {
    if (begun && !committed) {
      await client.query('rollback').catch((rollbackError: unknown) => {
        // A connection that cannot roll back is not handed to anyone else.
        client.__knex__disposed = rollbackError;
      });
    }
    throw error;
  } finally {
    await pool.releaseConnection(client);
  }
}

export function sqlExecutor(orm: MikroORM, schema: string, ctx?: Transaction): SqlExecutor {
  if (!ctx) {
    const pool = poolOf(orm);
    const onClient = async <T>(use: (client: PooledClient) => Promise<T>): Promise<T> => {
      const client = await pool.acquireConnection();
      try {
        return await use(client);
      } finally {
        await pool.releaseConnection(client);
      }
    };
    return rawExecutor(
      orm,
      schema,
      (text) => onClient(async (client) => lastResult(await client.query(text))),
      (name, text, values) => onClient((client) => client.query({ name, text, values })),
    );
  }
  const connection = orm.em.getConnection();
  return {
    schema,
    table: (name) => `${quoteIdent(schema)}.${quoteIdent(name)}`,
    query: async <R>(sql: string, params: readonly unknown[] = []) =>
      (await connection.execute(sql, [...params], 'all', ctx)) as R[],
    run: async (sql: string, params: readonly unknown[] = []) => {
      const res = (await connection.execute(sql, [...params], 'run', ctx)) as unknown as { affectedRows: number };
      return res.affectedRows;
    },
    prepared: async <R>(_name: string, text: string, values: readonly unknown[]) => {
      const { sql, params } = positionalText(text, values);
      return (await connection.execute(sql, params, 'all', ctx)) as R[];
    },
  };
}

/** Timestamps come back from MikroORM's pg connection as text: have Postgres format them like `Date.toISOString()`. */
export function isoColumn(column: string, alias = column): string {
  // to_char(null) is null, so nullable columns need no special case.
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${quoteIdent(alias)}`;
}

/**
 * A WHERE clause built one condition at a time, its parameters kept in the order of its placeholders:
 * the optional filters of a listing (`eq('t.status', filter.status)`: no condition when the value is
 * undefined).
 */
export class Conditions {
  private readonly parts: string[];
  readonly params: unknown[];

  constructor(...always: string[]) {
    this.parts = always;
    this.params = [];
  }

  /** `column = ?`, unless `value` is undefined. */
  eq(column: string, value: unknown): this {
    return value === undefined ? this : this.and(`${column} = ?`, value);
  }

  /** A condition and the values of its placeholders. */
  and(condition: string, ...params: unknown[]): this {
    this.parts.push(condition);
    this.params.push(...params);
    return this;
  }

  get empty(): boolean {
    return this.parts.length === 0;
  }

  /** The conditions joined by `and`. */
  toString(): string {
    return this.parts.join(' and ');
  }
}
