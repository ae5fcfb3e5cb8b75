import { userInfo } from 'node:os';
import type { NatsConnection } from 'nats';
import {
  connectNats,
  masterKeyFromFile,
  openServiceDatabase,
  redactUrl,
  type Database,
  type ServiceName,
} from '@ratchet/adapters';
import { listThreadKeysWithSnapshots } from '@ratchet/adapters/operator';
import { SubjectToken } from '@ratchet/contracts';
import { type CliConfig } from './config';
import { CliError, PG, UsageError, pgCode, rethrowNotMigrated } from './errors';
import { type Output } from './output';

/** What every command action starts from: the parsed configuration and where to write. */
export interface CommandContext {
  config: CliConfig;
  out: Output;
}

/** Opens one service's schema, turning "no such database" into a message that says what to do. */
export async function openSchema(config: CliConfig, service: ServiceName, poolMax = 2): Promise<Database> {
  try {
    return await openServiceDatabase(config.DATABASE_URL, service, poolMax, masterKeyFromFile(config.RATCHET_KEY_FILE));
  } catch (error) {
    if (pgCode(error) === PG.invalidCatalogName) {
      throw new CliError(
        `database ${new URL(config.DATABASE_URL).pathname.slice(1)} does not exist on ${redactUrl(config.DATABASE_URL)}: check DATABASE_URL, or run \`ratchet migrate\` to create it`,
        undefined,
        'database.missing',
        { cause: error },
      );
    }
    throw error;
  }
}

/** Runs `work` with a service's schema open; a missing table becomes "run ratchet migrate first". */
export async function withSchema<T>(
  config: CliConfig,
  service: ServiceName,
  work: (db: Database) => Promise<T>,
): Promise<T> {
  const db = await openSchema(config, service);
  try {
    return await work(db);
  } catch (error) {
    rethrowNotMigrated(error, `${db.safeUrl} is missing tables of schema ${db.schema}: run \`ratchet migrate\` first`);
  } finally {
    await db.close();
  }
}

export async function withNats<T>(config: CliConfig, work: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connectNats({ url: config.NATS_URL, name: 'ratchet-cli', timeoutMs: 5_000 });
  try {
    return await work(nc);
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** The OS user running the CLI, for records of who did something; `unknown` where there is none. */
export function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

export function assertToken(what: string, value: string): void {
  if (!SubjectToken.safeParse(value).success) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(value)}: expected letters, digits, "_" or "-" only`);
  }
}

/**
 * The tenant of a thread: the one given, else the only tenant that has a thread with this id. Thread ids
 * are random, so an operator usually has just the id; two tenants with the same id must be told apart.
 */
export async function resolveTenant(db: Database, threadId: string, tenant: string | undefined): Promise<string> {
  assertToken('thread id', threadId);
  if (tenant !== undefined) {
    assertToken('tenant', tenant);
    return tenant;
  }
  // By the version-1 event, or by the snapshot of a compacted thread.
  const tenants = (await listThreadKeysWithSnapshots(db.sql, { threadId })).map((k) => k.tenantId);
  if (tenants.length === 1) return tenants[0]!;
  if (tenants.length === 0) throw new CliError(`thread ${threadId} has no events`, undefined, 'thread.not_found');
  throw new UsageError(`thread ${threadId} exists in several tenants (${tenants.join(', ')}): pass --tenant`);
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
