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
  foldEvents,
  initialThreadState,
  runRowsFromLog,
  threadColumns,
  type RunRow,
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
  snapshot: ThreadSnapshot<ThreadState> | undefined;
  events: ThreadEvent[];
}

export async function readThreadLog(db: Database, tenantId: string, threadId: string): Promise<ThreadLog> {
  const snapshot = await readSnapshot<ThreadState>(db.sql, tenantId, threadId);
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

/** The fold of a thread's log: the snapshot's state (else the initial state) and the events after it. */
export function foldLog(log: ThreadLog): ThreadState {
  return foldEvents(log.snapshot?.state ?? initialThreadState(), log.events);
}

/** The last version a log reaches (its snapshot's when no event follows it). */
export function logVersionOf(log: ThreadLog): number {
  return log.events.at(-1)?.version ?? log.snapshot?.version ?? 0;
}

/**
 * Every `runs` row as the orchestrator would have left it: `runRowsFromLog` reads only each event's run id
 * and version, so the runs the snapshot covers enter as (runId, version) marks ahead of the events.
 */
export function runRowsOfLog(tenantId: string, threadId: string, state: ThreadState, log: ThreadLog): RunRow[] {
  const marks = Object.entries(log.snapshot?.runVersions ?? {}).map(
    ([runId, version]) => ({ runId, version }) as unknown as ThreadEvent,
  );
  return runRowsFromLog(tenantId, threadId, state, [...marks, ...log.events]);
}

/** Per run, the version of the last event that touched it (what a snapshot keeps of the events it replaces). */
export function runVersionsOf(base: Record<string, number>, events: readonly ThreadEvent[]): Record<string, number> {
  const out = { ...base };
  for (const e of events) if (e.runId !== undefined) out[e.runId] = e.version;
  return out;
}

/** The snapshot of a thread read inside a transaction (for compaction). */
export function readSnapshotIn(sql: SqlExecutor, tenantId: string, threadId: string) {
  return readSnapshot<ThreadState>(sql, tenantId, threadId);
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
 * version tag, the jsonb state, the queryable columns of `threads` and the `runs` rows.
 */
export async function verifyThread(db: Database, tenantId: string, threadId: string): Promise<Verification> {
  const store = threadStore(db);
  const [log, stored, columns, runs] = await Promise.all([
    readThreadLog(db, tenantId, threadId),
    store.readProjection(tenantId, threadId),
    readThreadColumns(db.sql, tenantId, threadId),
    listRuns(db.sql, tenantId, threadId),
  ]);
  const folded = foldLog(log);
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
  const expectedRuns = runRowsOfLog(tenantId, threadId, folded, log);
  diffProjections(byRun(runs), byRun(expectedRuns), 'runs', result.divergences);
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

/**
 * Rewrites a thread's projection (the `threads` row and every `runs` row) from its whole log (from its
 * snapshot on, for a compacted thread), in one transaction. Safe next to a running orchestrator: the
 * events are read inside the transaction, and a projection one append behind is caught up by the
 * orchestrator on its next command for the thread.
 */
export async function rebuildThread(
  db: Database,
  tenantId: string,
  threadId: string,
): Promise<{ version: number; runs: number; events: ThreadEvent[] }> {
  const snapshot = await readSnapshot<ThreadState>(db.sql, tenantId, threadId);
  return threadStore(db).transaction(async (tx) => {
    const events = await tx.loadEvents(tenantId, threadId, snapshot?.version ?? 0);
    if (events.length === 0 && !snapshot)
      throw new Error(`thread ${tenantId}/${threadId} has no events to rebuild from`);
    assertContinues(tenantId, threadId, snapshot, events);
    const log = { snapshot, events };
    const state = foldLog(log);
    const version = logVersionOf(log);
    const runs = runRowsOfLog(tenantId, threadId, state, log);
    await tx.saveProjection({ tenantId, threadId, version, state }, runs);
    return { version, runs: runs.length, events };
  });
}
