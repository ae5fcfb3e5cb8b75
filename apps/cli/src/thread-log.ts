import { PgThreadStore, openServiceDatabase, type Database } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import { CliError, PG, pgCode } from './cli.errors';

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
): Promise<ThreadEvent[]> {
  const db: Database = await openServiceDatabase(databaseUrl, 'orchestrator', 1);
  try {
    return await new PgThreadStore(db, readOnlyColumns).readEvents(tenantId, threadId, afterVersion);
  } catch (error) {
    if (pgCode(error) === PG.undefinedTable) {
      throw new CliError(
        `${db.safeUrl} has no orchestrator.thread_events table: run \`npm run ratchet -- migrate\` first`,
        undefined,
        'database.not_migrated',
        { cause: error },
      );
    }
    throw error;
  } finally {
    await db.close();
  }
}
