import { PgThreadStore, openServiceDatabase, redactUrl, type Database } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import type { KeyWrapper } from '@ratchet/domain';
import { CliError, PG, pgCode, rethrowNotMigrated } from './errors';

/** The CLI only reads the log; a projection write through this store is a bug. */
const readOnlyColumns = (): never => {
  throw new Error('the ratchet CLI reads thread logs and never writes projections');
};

/** Reads a thread's events (versions > `afterVersion`) from the orchestrator schema, the system of record. */
export async function readThreadEvents(
  databaseUrl: string,
  tenantId: string,
  threadId: string,
  afterVersion = 0,
  masterKey?: KeyWrapper,
): Promise<ThreadEvent[]> {
  let db: Database;
  try {
    db = await openServiceDatabase(databaseUrl, 'orchestrator', 1, masterKey);
  } catch (error) {
    if (pgCode(error) === PG.invalidCatalogName) {
      throw new CliError(
        `database ${new URL(databaseUrl).pathname.slice(1)} does not exist on ${redactUrl(databaseUrl)}: check DATABASE_URL, or run \`npm run ratchet -- migrate\` to create it`,
        undefined,
        'database.missing',
        { cause: error },
      );
    }
    throw error;
  }
  try {
    return await new PgThreadStore(db, readOnlyColumns).readEvents(tenantId, threadId, afterVersion);
  } catch (error) {
    rethrowNotMigrated(
      error,
      `${db.safeUrl} has no orchestrator.thread_events table: run \`npm run ratchet -- migrate\` first`,
    );
  } finally {
    await db.close();
  }
}
