import { PgThreadStore, listRuns, readThreadColumns, type Database } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import {
  diffProjections,
  foldEvents,
  initialThreadState,
  runRowsFromLog,
  threadColumns,
  type ThreadState,
} from '@ratchet/domain';

/** The orchestrator's store with the orchestrator's own column mapper: rebuilt rows equal written ones. */
export function threadStore(db: Database): PgThreadStore<ThreadState> {
  return new PgThreadStore<ThreadState>(db, threadColumns);
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
  const [events, stored, columns, runs] = await Promise.all([
    store.readEvents(tenantId, threadId),
    store.readProjection(tenantId, threadId),
    readThreadColumns(db.sql, tenantId, threadId),
    listRuns(db.sql, tenantId, threadId),
  ]);
  const folded = foldEvents(initialThreadState(), events);
  const logVersion = events.at(-1)?.version ?? 0;
  const result: Verification = {
    tenantId,
    threadId,
    logVersion,
    storedVersion: stored?.version ?? null,
    divergences: [],
  };
  if (!stored) {
    if (events.length > 0) result.divergences.push('(projection): missing, the log has events');
    return result;
  }
  if (stored.version !== logVersion) {
    result.divergences.push(`version: stored ${stored.version} ≠ replayed ${logVersion}`);
  }
  result.divergences.push(
    ...diffProjections(canonicalJsonStrings(stored.state), canonicalJsonStrings(folded), 'state'),
  );
  if (columns) diffProjections(columns, threadColumns(folded), 'threads', result.divergences);
  const expectedRuns = runRowsFromLog(tenantId, threadId, folded, events);
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
 * Rewrites a thread's projection (the `threads` row and every `runs` row) from its whole log, in one
 * transaction. Safe next to a running orchestrator: the log is read inside the transaction, and a
 * projection one append behind is caught up by the orchestrator on its next command for the thread.
 */
export async function rebuildThread(
  db: Database,
  tenantId: string,
  threadId: string,
): Promise<{ version: number; runs: number; events: ThreadEvent[] }> {
  return threadStore(db).transaction(async (tx) => {
    const events = await tx.loadEvents(tenantId, threadId, 0);
    if (events.length === 0) throw new Error(`thread ${tenantId}/${threadId} has no events to rebuild from`);
    const state = foldEvents(initialThreadState(), events);
    const version = events.at(-1)!.version;
    const runs = runRowsFromLog(tenantId, threadId, state, events);
    await tx.saveProjection({ tenantId, threadId, version, state }, runs);
    return { version, runs: runs.length, events };
  });
}
