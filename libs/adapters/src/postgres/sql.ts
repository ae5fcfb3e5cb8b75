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
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `(?, ?), (?, ?)`: one multi-row VALUES list, so a batch costs one round trip. */
export function valuesList(rows: number, row: string): string {
  return Array.from({ length: rows }, () => row).join(', ');
}

export function sqlExecutor(orm: MikroORM, schema: string, ctx?: Transaction): SqlExecutor {
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
  };
}

/** Timestamps come back from MikroORM's pg connection as text: have Postgres format them like `Date.toISOString()`. */
export function isoColumn(column: string, alias = column): string {
  // to_char(null) is null, so nullable columns need no special case.
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${quoteIdent(alias)}`;
}
