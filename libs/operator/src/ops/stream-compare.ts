import type { FeedMessage } from './stream-read';

/** How one thread's copy on the bus differs from its log in Postgres. Pure. */
export interface StreamComparison {
  tenantId: string;
  threadId: string;
  logEvents: number;
  streamMessages: number;
  /** In Postgres, not on the bus (and young enough that the stream should still hold them). */
  missing: { version: number; id: string; type: string }[];
  /** Older than the stream's max age: gone from the bus by retention, not by loss. */
  expired: number;
  /** The same event more than once on the bus (a re-publish after the dedup window). */
  duplicated: { version: number; id: string; seqs: number[] }[];
  /** Versions whose first copy on the bus comes after a higher version's. */
  reordered: { version: number; seq: number; after: number }[];
  /** On the bus but not in the log (unknown id, or another id at that version): never committed? */
  unknown: { seq: number; msgId: string | undefined; version: number | undefined }[];
}

export function compareStream(
  tenantId: string,
  threadId: string,
  log: readonly { id: string; version: number; at: string; type: string }[],
  feed: readonly FeedMessage[],
  expiredBefore: number | undefined,
): StreamComparison {
  const byId = new Map(log.map((e) => [e.id, e]));
  const seen = new Map<string, number[]>();
  const unknown: StreamComparison['unknown'] = [];
  const reordered: StreamComparison['reordered'] = [];
  let highest = 0;
  for (const m of feed) {
    const id = m.event?.id ?? m.msgId;
    const logged = id === undefined ? undefined : byId.get(id);
    if (!logged || (m.event && m.event.version !== logged.version)) {
      unknown.push({ seq: m.seq, msgId: m.msgId, version: m.event?.version });
      continue;
    }
    const seqs = seen.get(logged.id) ?? [];
    seqs.push(m.seq);
    seen.set(logged.id, seqs);
    if (seqs.length > 1) continue;
    if (logged.version < highest) reordered.push({ version: logged.version, seq: m.seq, after: highest });
    highest = Math.max(highest, logged.version);
  }
  const missing: StreamComparison['missing'] = [];
  let expired = 0;
  for (const e of log) {
    if (seen.has(e.id)) continue;
    if (expiredBefore !== undefined && Date.parse(e.at) < expiredBefore) expired += 1;
    else missing.push({ version: e.version, id: e.id, type: e.type });
  }
  const duplicated = [...seen.entries()]
    .filter(([, seqs]) => seqs.length > 1)
    .map(([id, seqs]) => ({ id, version: byId.get(id)!.version, seqs }));
  return {
    tenantId,
    threadId,
    logEvents: log.length,
    streamMessages: new Set(feed.map((m) => m.seq)).size,
    missing,
    expired,
    duplicated,
    reordered,
    unknown,
  };
}

export function isClean(c: StreamComparison): boolean {
  return c.missing.length === 0 && c.unknown.length === 0 && c.duplicated.length === 0 && c.reordered.length === 0;
}
