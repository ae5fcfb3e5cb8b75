import { MikroORM, type Constructor } from '@mikro-orm/core';
import { Migrator, type Migration } from '@mikro-orm/migrations';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { KeyWrapper } from '@ratchet/domain';
import { ContentSeal } from '../keys/content-seal';
import { quoteIdent, sqlExecutor, type SqlExecutor } from './sql';
import { PgContentKeys } from './thread-keys.repository';

/** The schema that holds the threads' log and their data keys (`thread_keys`). */
const THREADS_SCHEMA = 'orchestrator';

export type MigrationClass = Constructor<Migration>;

export interface OpenDatabaseOptions {
  url: string;
  /** The service's own Postgres schema; every table and the migrations table live in it. */
  schema: string;
  /** Listed statically: the default dynamic import of migration files fails inside jest workers. */
  migrations: readonly MigrationClass[];
  poolMax?: number;
  /**
   * The master key the threads' data keys are wrapped with (RATCHET_KEY_FILE): with it, the threads'
   * content is sealed where it is stored and opened where it is read; without it, written in clear.
   */
  masterKey?: KeyWrapper | undefined;
}

export interface Database {
  readonly orm: MikroORM<PostgreSqlDriver>;
  readonly schema: string;
  /** The URL with its password redacted, for logs and errors. */
  readonly safeUrl: string;
  /** Autocommit SQL against this schema (each statement its own transaction). */
  readonly sql: SqlExecutor;
  /** Seals and opens the threads' content (their data keys are in the orchestrator's schema). */
  readonly content: ContentSeal;
  /** Creates the schema if missing and applies pending migrations; safe to run from many processes at once. */
  migrate(): Promise<string[]>;
  pendingMigrations(): Promise<string[]>;
  close(): Promise<void>;
}

export class DatabaseUnavailableError extends Error {
  readonly code = 'database.unavailable';
  constructor(safeUrl: string, reason: string, options?: { cause?: unknown }) {
    super(
      `cannot connect to Postgres at ${safeUrl}: ${reason}. ` +
        'Start it (e.g. `docker compose up -d nats postgres`) or point DATABASE_URL at a running server.',
      options,
    );
    this.name = 'DatabaseUnavailableError';
  }
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable database url>';
  }
}

const MIGRATIONS_TABLE = 'mikro_orm_migrations';

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const safeUrl = redactUrl(options.url);
  // The class name is the migration's identity in the migrations table (it never changes once shipped).
  const migrationsList = options.migrations.map((cls) => ({ name: cls.name, class: cls }));
  let orm: MikroORM<PostgreSqlDriver>;
  try {
    orm = await MikroORM.init<PostgreSqlDriver>({
      driver: PostgreSqlDriver,
      clientUrl: options.url,
      schema: options.schema,
      entities: [],
      // The adapters speak raw SQL for now; MikroORM provides the pool, transactions and migrations.
      discovery: { warnWhenNoEntities: false },
      connect: false,
      ensureDatabase: false,
      allowGlobalContext: true,
      // At least 2: the migrator checks its table on a second connection while the migration transaction is open.
      pool: { min: 0, max: Math.max(2, options.poolMax ?? 10) },
      driverOptions: { acquireConnectionTimeout: 10_000, connection: { connectionTimeoutMillis: 5_000 } },
      extensions: [Migrator],
      migrations: {
        migrationsList,
        tableName: MIGRATIONS_TABLE,
        transactional: true,
        allOrNothing: true,
        snapshot: false,
        silent: true,
        disableForeignKeys: false,
      },
    });
  } catch (error) {
    throw new DatabaseUnavailableError(safeUrl, (error as Error).message, { cause: error });
  }
  const check = await orm.checkConnection();
  if (!check.ok) {
    await orm.close(true).catch(() => undefined);
    throw new DatabaseUnavailableError(safeUrl, check.reason ?? 'unknown error', { cause: check.error });
  }

  const connection = orm.em.getConnection();
  const schema = quoteIdent(options.schema);
  const lockKey = `ratchet:migrate:${options.schema}`;

  return {
    orm,
    schema: options.schema,
    safeUrl,
    sql: sqlExecutor(orm, options.schema),
    content: new ContentSeal(new PgContentKeys(sqlExecutor(orm, THREADS_SCHEMA), options.masterKey)),
    async migrate() {
      // Committed before the migrator looks: it lists tables on a pooled connection outside our
      // transaction and would otherwise race (or wait on) us to create the migrations table.
      await connection.transactional(async (trx) => {
        await connection.execute('select pg_advisory_xact_lock(hashtext(?))', [lockKey], 'run', trx);
        await connection.execute(`create schema if not exists ${schema}`, [], 'run', trx);
        await connection.execute(
          `create table if not exists ${schema}.${quoteIdent(MIGRATIONS_TABLE)} ` +
            '(id serial primary key, name varchar(255), executed_at timestamptz default current_timestamp)',
          [],
          'run',
          trx,
        );
      });
      // All pending migrations in one transaction, serialised across processes by the advisory lock.
      const applied = await connection.transactional(async (trx) => {
        await connection.execute('select pg_advisory_xact_lock(hashtext(?))', [lockKey], 'run', trx);
        return orm.getMigrator().up({ transaction: trx });
      });
      return applied.map((m) => m.name);
    },
    async pendingMigrations() {
      const exists = await connection.execute<{ n: number }[]>(
        'select count(*)::int as n from information_schema.tables where table_schema = ? and table_name = ?',
        [options.schema, MIGRATIONS_TABLE],
      );
      if ((exists[0]?.n ?? 0) === 0) return migrationsList.map((m) => m.name);
      return (await orm.getMigrator().getPendingMigrations()).map((m) => m.name);
    },
    async close() {
      await orm.close(true);
    },
  };
}
