import { quoteIdent, redactUrl } from '@ratchet/adapters';
import { CliError, PG, pgCode } from './errors';

/** The part of `pg` the CLI uses (the workspace has no @types/pg; this keeps the surface explicit). */
interface PgClient {
  connect(): Promise<void>;
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Client } = require('pg') as {
  Client: new (config: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient;
};

/** Maintenance databases tried in order to run CREATE DATABASE from. */
const MAINTENANCE_DATABASES = ['postgres', 'template1'];
const CONNECTION_LOST = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET']);

export interface EnsureDatabaseResult {
  /** The database named in the URL. */
  name: string;
  created: boolean;
}

/**
 * Creates the database named in `url` if it does not exist, connected to a maintenance database of the
 * same server. When no maintenance database lets us in (a managed server, a restricted role), nothing
 * is created: the caller's own connection then says whether the database is there.
 */
export async function ensureDatabase(url: string): Promise<EnsureDatabaseResult> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (name === '') return { name: '(default of the user)', created: false };
  for (const maintenance of MAINTENANCE_DATABASES) {
    if (maintenance === name) return { name, created: false };
    const adminUrl = new URL(url);
    adminUrl.pathname = `/${maintenance}`;
    const client = new Client({ connectionString: adminUrl.toString(), connectionTimeoutMillis: 5_000 });
    client.on('error', () => undefined); // a dropped idle connection must not crash the CLI
    try {
      await client.connect();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && CONNECTION_LOST.has(code)) {
        throw new CliError(
          `cannot connect to Postgres at ${redactUrl(url)} (${code}). Start it or point DATABASE_URL at a running server.`,
          undefined,
          'database.unavailable',
          { cause: error },
        );
      }
      if ((error as Error).message.includes('timeout')) {
        throw new CliError(
          `cannot connect to Postgres at ${redactUrl(url)}: ${(error as Error).message}`,
          undefined,
          'database.unavailable',
          {
            cause: error,
          },
        );
      }
      continue; // no such maintenance database, or not allowed in: try the next one
    }
    try {
      const found = await client.query<{ one: number }>('select 1 as one from pg_database where datname = $1', [name]);
      if (found.rows.length > 0) return { name, created: false };
      try {
        await client.query(`create database ${quoteIdent(name)}`);
        return { name, created: true };
      } catch (error) {
        if (pgCode(error) === PG.duplicateDatabase) return { name, created: false }; // created by someone else meanwhile
        throw new CliError(
          `cannot create database ${name} on ${redactUrl(url)}: ${(error as Error).message}`,
          undefined,
          'database.create_failed',
          {
            cause: error,
          },
        );
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return { name, created: false };
}
