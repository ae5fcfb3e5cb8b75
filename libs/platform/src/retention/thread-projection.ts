import {
  PgThreadStore,
  listRuns,
  readSnapshot,
  readThreadColumns,
  type Database,
  type SqlExecutor,
  type ThreadSnapshot,
} from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import {
  diffProjections,
  foldRecord,
  recordFrom,
  recordOfSnapshot,
  runRowsOf,
  threadColumns,
  type RunRow,
  type SnapshotState,
  type ThreadRecord,
  type ThreadState,
} from '@ratchet/domain';

/** The orchestrator's store with the orchestrator's own column mapper: rebuilt rows equal written ones. */
export function threadStore(db: Database): PgThreadStore<ThreadState> {
  return new PgThreadStore<ThreadState>(db, threadColumns);
}

/**
 * A thread's log as the CLI folds it: the snapshot it was compacted behind (if any) and the events after
 * it. Throws when the events do not continue the snapshot (or version 1) without a gap, e.g. when the
 * thread was compacted between the two reads: run the command again.
 */
export interface ThreadLog {
  snapshot: ThreadSnapshot<SnapshotState> | undefined;
  events: ThreadEvent[];
}

export async function readThreadLog(db: Database, tenantId: string, threadId: string): Promise<ThreadLog> {
  const snapshot = await readSnapshot<SnapshotState>(db.sql, tenantId, threadId);
  const events = await threadStore(db).readEvents(tenantId, threadId, snapshot?.version ?? 0);
  assertContinues(tenantId, threadId, snapshot, events);
  return { snapshot, events };
}

function assertContinues(
  tenantId: string,
  threadId: string,
  snapshot: ThreadSnapshot | undefined,
  events: readonly ThreadEvent[],
): void {
  const first = (snapshot?.version ?? 0) + 1;
  if (events.length > 0 && events[0]!.version !== first) {
    throw new Error(
      `thread ${tenantId}/${threadId}: the log starts at version ${events[0]!.version}, expected ${first}` +
        (snapshot ? ` (after its snapshot at v${snapshot.version})` : '') +
        ': it was compacted meanwhile, run the command again',
    );
  }
}

/**
 * The fold of a thread's log: the snapshot's record (else the empty one) and the events after it — the
 * state, the whole conversation and every run's summary.
 */
export function foldLog(log: ThreadLog): ThreadRecord {
  const base = log.snapshot ? recordOfSnapshot(log.snapshot.state, log.snapshot.runVersions) : recordFrom();
  return foldRecord(base, log.events);
}

/** The last version a log reaches (its snapshot's when no event follows it). */
export function logVersionOf(log: ThreadLog): number {
  return log.events.at(-1)?.version ?? log.snapshot?.version ?? 0;
}

/** Every `runs` row as the orchestrator would have left it after writing this whole log. */
export function runRowsOfLog(tenantId: string, threadId: string, record: ThreadRecord): RunRow[] {
  return runRowsOf(tenantId, threadId, record);
}

/** The snapshot of a thread read inside a transaction (for compaction). */
export function readSnapshotIn(sql: SqlExecutor, tenantId: string, threadId: string) {
  return readSnapshot<SnapshotState>(sql, tenantId, threadId);
}

export interface Verification {
  tenantId: string;
  threadId: string;
  /** The last version of the log. */
  logVersion: number;
  /** The version the stored projection says it reflects; null when there is no projection row. */
  storedVersion: number | null;
  /** Readable paths where the stored projection differs from the fold of the log. */
  divergences: string[];
}

/**
 * Folds the log with the current code and compares every stored part of the projection with it: the
 * version tag, the jsonb state, the queryable columns of `threads`, the `runs` rows and the conversation
 * (`thread_messages`, by message number).
 */
export async function verifyThread(db: Database, tenantId: string, threadId: string): Promise<Verification> {
  const store = threadStore(db);
  const [log, stored, columns, runs, messages] = await Promise.all([
    readThreadLog(db, tenantId, threadId),
    store.readProjection(tenantId, threadId),
    readThreadColumns(db.sql, tenantId, threadId),
    listRuns(db.sql, tenantId, threadId),
    store.readMessages(tenantId, threadId),
  ]);
  const record = foldLog(log);
  const folded = record.state;
  const logVersion = logVersionOf(log);
  const result: Verification = {
    tenantId,
    threadId,
    logVersion,
    storedVersion: stored?.version ?? null,
    divergences: [],
  };
  if (!stored) {
    if (logVersion > 0) result.divergences.push('(projection): missing, the log has events');
    return result;
  }
  if (stored.version !== logVersion) {
    result.divergences.push(`version: stored ${stored.version} ≠ replayed ${logVersion}`);
  }
  result.divergences.push(
    ...diffProjections(canonicalJsonStrings(stored.state), canonicalJsonStrings(folded), 'state'),
  );
  if (columns) diffProjections(columns, threadColumns(folded), 'threads', result.divergences);
  const expectedRuns = runRowsOfLog(tenantId, threadId, record);
  diffProjections(byRun(runs), byRun(expectedRuns), 'runs', result.divergences);
  diffProjections(
    canonicalJsonStrings(bySeq(messages)),
    canonicalJsonStrings(bySeq(record.transcript)),
    'messages',
    result.divergences,
  );
  return result;
}

/**
 * The transcript holds tool results as JSON text serialised from the event data. The orchestrator folds
 * the events it just decided (keys in the tool's order) while a replay folds them as read back from
 * jsonb (keys reordered by Postgres), so the same result can be two different strings. Key order is not
 * drift: compare such strings by their parsed value (re-serialised with sorted keys).
 */
export function canonicalJsonStrings(value: unknown): unknown {
  if (typeof value === 'string') {
    const t = value.trimStart();
    if (!t.startsWith('{') && !t.startsWith('[')) return value;
    try {
      return JSON.stringify(sortKeys(JSON.parse(value)));
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map(canonicalJsonStrings);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonicalJsonStrings(v)]));
  }
  return value;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function byRun(rows: { runId: string }[]): Record<string, unknown> {
  return Object.fromEntries(rows.map((r) => [r.runId, r]));
}

/** Messages keyed by their number in the conversation (from 1), as `thread_messages` numbers them. */
function bySeq(messages: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(messages.map((m, i) => [String(i + 1), m]));
}

/**
 * Rewrites a thread's projection (the `threads` row, every `runs` row and the conversation's messages)
 * from its whole log (from its snapshot on, for a compacted thread), in one transaction. Safe next to a
 * running orchestrator: the events are read inside the transaction, and a projection one append behind
 * is caught up by the orchestrator on its next command for the thread.
 */
export async function rebuildThread(
  db: Database,
  tenantId: string,
  threadId: string,
): Promise<{ version: number; runs: number; events: ThreadEvent[] }> {
  const snapshot = await readSnapshot<SnapshotState>(db.sql, tenantId, threadId);
  return threadStore(db).transaction(async (tx) => {
    const events = await tx.loadEvents(tenantId, threadId, snapshot?.version ?? 0);
    if (events.length === 0 && !snapshot)
      throw new Error(`thread ${tenantId}/${threadId} has no events to rebuild from`);
    assertContinues(tenantId, threadId, snapshot, events);
    const log = { snapshot, events };
    const record = foldLog(log);
    const version = logVersionOf(log);
    const runs = runRowsOfLog(tenantId, threadId, record);
    await tx.saveProjection({ tenantId, threadId, version, state: record.state }, runs, {
      from: 1,
      messages: record.transcript,
      whole: true,
    });
    return { version, runs: runs.length, events };
  });
}
