import type { JetStreamManager, NatsConnection } from 'nats';
import {
  lockThread,
  removeThreadEverywhere,
  saveSnapshotAndTrim,
  sqlExecutor,
  type Database,
  type RemovalCounts,
  type SqlExecutor,
  type ThreadKey,
  type ThreadKeyDisposal,
} from '@ratchet/adapters';
import { subjects, type Subjects } from '@ratchet/contracts';
import { foldRecord, recordFrom, recordOfSnapshot, snapshotStateOf } from '@ratchet/domain';
import { topologyFromConfig, type TopologySettings } from '../service/topology';
import { readThreadLog, verifyThread } from './thread-projection';

/** Thrown to roll a dry run's transaction back after it counted what it would do. */
class DryRunRollback extends Error {
  constructor(readonly value: unknown) {
    super('dry run: rolled back');
  }
}

/**
 * Runs `work` in one transaction over the shared database (every service's schema is reachable by its
 * qualified name). With `dryRun` the same statements run and are rolled back: the counts a dry run
 * reports are the counts the real run would have.
 */
export async function inTransaction<T>(
  db: Database,
  dryRun: boolean,
  work: (sql: SqlExecutor) => Promise<T>,
): Promise<T> {
  try {
    return await db.orm.em.getConnection().transactional(async (trx) => {
      const value = await work(sqlExecutor(db.orm, db.schema, trx));
      if (dryRun) throw new DryRunRollback(value);
      return value;
    });
  } catch (error) {
    if (error instanceof DryRunRollback) return error.value as T;
    throw error;
  }
}

export type CompactOutcome =
  | { outcome: 'compacted'; snapshotVersion: number; eventsRemoved: number; logVersion: number }
  | { outcome: 'skipped'; reason: string };

/**
 * Folds every event of a finished thread but the last into one snapshot (its state, conversation, run
 * summaries and version) and deletes those events. The conversation's rows (`thread_messages`) stay: they
 * are the projection of the whole log, which the snapshot now stands for in part. The last event stays:
 * the orchestrator appends only after an event it can see, and the projection row (unchanged) still says
 * which version the thread is at, so loading and resuming work as before. Refuses a thread that is not idle, moved meanwhile, or whose projection differs from
 * its log (rebuild it first: a snapshot must not freeze a drift).
 */
export async function compactThread(db: Database, key: ThreadKey, dryRun: boolean): Promise<CompactOutcome> {
  return inTransaction(db, dryRun, async (sql): Promise<CompactOutcome> => {
    // Holding this row lock keeps the orchestrator from committing to the thread until we are done.
    const locked = await lockThread(sql, key.tenantId, key.threadId);
    if (!locked) return { outcome: 'skipped', reason: 'no projection' };
    if (locked.status !== 'idle') return { outcome: 'skipped', reason: `not finished (${locked.status})` };
    const log = await readThreadLog(db, key.tenantId, key.threadId);
    const last = log.events.at(-1)?.version ?? log.snapshot?.version ?? 0;
    if (last !== locked.version)
      return { outcome: 'skipped', reason: `moved (log v${last}, projection v${locked.version})` };
    const check = await verifyThread(db, key.tenantId, key.threadId);
    if (check.divergences.length > 0) {
      return {
        outcome: 'skipped',
        reason: `projection diverges from the log: run \`ratchet rebuild --thread ${key.threadId}\``,
      };
    }
    const covered = log.events.slice(0, -1);
    if (covered.length === 0) return { outcome: 'skipped', reason: 'nothing to compact' };
    const version = covered.at(-1)!.version;
    const base = log.snapshot ? recordOfSnapshot(log.snapshot.state, log.snapshot.runVersions) : recordFrom();
    const record = foldRecord(base, covered);
    const eventsRemoved = await saveSnapshotAndTrim(sql, {
      tenantId: key.tenantId,
      threadId: key.threadId,
      version,
      state: snapshotStateOf(record),
      runVersions: record.runVersions,
      eventsRemoved: 0,
    });
    return { outcome: 'compacted', snapshotVersion: version, eventsRemoved, logVersion: last };
  });
}

/** The EVENTS stream's name for this configuration. */
export function eventsStream(config: TopologySettings): string {
  return topologyFromConfig(config).streams.find((x) => x.role === 'events')!.config.name;
}

/**
 * Removes the EVENTS stream messages of a thread (its subjects: the per-event feed and the decision feed);
 * a dry run counts them. Returns the number of messages (0 when the stream does not exist).
 */
export async function purgeThreadSubject(
  nc: NatsConnection,
  config: TopologySettings,
  key: ThreadKey,
  dryRun: boolean,
): Promise<number> {
  const jsm = await nc.jetstreamManager();
  const stream = eventsStream(config);
  let total = 0;
  for (const filter of threadFeedSubjects(subjects(config.RATCHET_SUBJECT_PREFIX), key.tenantId, key.threadId)) {
    if (dryRun) {
      const info = await jsm.streams.info(stream, { subjects_filter: filter }).catch(() => undefined);
      total += Object.values(info?.state.subjects ?? {}).reduce((n, c) => n + c, 0);
      continue;
    }
    total += await purgeSubjects(jsm, stream, [filter]);
  }
  return total;
}

/** Purges `filters` from `stream`; how many messages went (0 when the stream does not exist). */
export async function purgeSubjects(
  jsm: JetStreamManager,
  stream: string,
  filters: readonly string[],
): Promise<number> {
  let purged = 0;
  for (const filter of filters) {
    const done = await jsm.streams.purge(stream, { filter }).catch((error: unknown) => {
      if ((error as { api_error?: { err_code?: number } }).api_error?.err_code === 10059) return { purged: 0 }; // no such stream
      throw error;
    });
    purged += done.purged;
  }
  return purged;
}

/** Every subject of the EVENTS stream a thread's messages are on: the per-event feed and the decision feed (v2). */
export function threadFeedSubjects(s: Subjects, tenantId: string, threadId: string): string[] {
  return [s.events(tenantId, threadId), s.feed(tenantId, threadId)];
}

/** Removes a thread's rows from every schema in the caller's transaction, after checking it is not running. */
export async function removeThreadRows(
  sql: SqlExecutor,
  key: ThreadKey,
  dataKey: ThreadKeyDisposal,
): Promise<RemovalCounts> {
  const locked = await lockThread(sql, key.tenantId, key.threadId);
  if (locked && locked.status !== 'idle') {
    throw new Error(`thread ${key.tenantId}/${key.threadId} has a run going (${locked.status}): nothing was removed`);
  }
  return removeThreadEverywhere(sql, key.tenantId, key.threadId, dataKey);
}

/** Adds `b` into `a` (counts per table or stream). */
export function addCounts(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  for (const [k, n] of Object.entries(b)) a[k] = (a[k] ?? 0) + n;
  return a;
}

export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((n, c) => n + c, 0);
}

/** Only the non-zero counts, in key order (what a report shows). */
export function nonZero(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}
