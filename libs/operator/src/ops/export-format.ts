import { decodeThreadEvent, type ThreadEvent } from '@ratchet/contracts';
import type { SnapshotState } from '@ratchet/domain';

/** The first line of an export: what the lines after it are. */
export const EXPORT_FORMAT = 'ratchet.thread-events';
export const EXPORT_FORMAT_VERSION = 1;
/** The format of an export that holds snapshot lines (compacted threads); readers accept both. */
export const EXPORT_FORMAT_VERSION_SNAPSHOTS = 2;

/** A compacted thread's snapshot line: `{"snapshot": …}`, ahead of the thread's events. */
export interface ExportedSnapshot {
  tenantId: string;
  threadId: string;
  version: number;
  /** The fold of the events it replaced: the state with the conversation and the run summaries. */
  state: SnapshotState;
  runVersions: Record<string, number>;
}

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  formatVersion: number;
  exportedAt: string;
  threads: number;
  events: number;
  /** Compacted threads (format 2 only). */
  snapshots?: number;
}

export interface ParsedExport {
  header: ExportHeader;
  /** Per thread (in file order), its events in version order, with the tenant map applied. */
  threads: { tenantId: string; threadId: string; snapshot?: ExportedSnapshot; events: ThreadEvent[] }[];
}

/**
 * Parses and checks a whole export before anything is written: the header, every event through the
 * wire schema (old versions upcast), each thread's versions contiguous from 1. Errors name the line.
 */
export function parseExport(text: string, tenantMap: ReadonlyMap<string, string> = new Map()): ParsedExport {
  const lines = text.split('\n');
  const headerLine = lines[0]?.trim();
  if (!headerLine) throw new Error('line 1: empty file, expected an export header');
  const header = JSON.parse(headerLine) as Partial<ExportHeader>;
  if (header.format !== EXPORT_FORMAT)
    throw new Error(`line 1: not a ratchet export (format ${JSON.stringify(header.format)})`);
  if (header.formatVersion !== EXPORT_FORMAT_VERSION && header.formatVersion !== EXPORT_FORMAT_VERSION_SNAPSHOTS) {
    throw new Error(
      `line 1: export format version ${header.formatVersion} is not supported (expected ${EXPORT_FORMAT_VERSION} or ${EXPORT_FORMAT_VERSION_SNAPSHOTS})`,
    );
  }
  const threads = new Map<string, ParsedExport['threads'][number]>();
  lines.slice(1).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    let event: ThreadEvent;
    const snapshot = snapshotLine(line, i + 2, tenantMap);
    if (snapshot) {
      const key = `${snapshot.tenantId}/${snapshot.threadId}`;
      if (threads.has(key)) throw new Error(`line ${i + 2}: the snapshot of ${key} must come before its events`);
      threads.set(key, { tenantId: snapshot.tenantId, threadId: snapshot.threadId, snapshot, events: [] });
      return;
    }
    try {
      const parsed = JSON.parse(line) as { tenantId?: unknown };
      const mapped = typeof parsed.tenantId === 'string' ? tenantMap.get(parsed.tenantId) : undefined;
      event = decodeThreadEvent(mapped ? { ...parsed, tenantId: mapped } : parsed);
    } catch (error) {
      throw new Error(`line ${i + 2}: not a valid thread event: ${(error as Error).message.split('\n')[0]}`);
    }
    const key = `${event.tenantId}/${event.threadId}`;
    const thread = threads.get(key) ?? { tenantId: event.tenantId, threadId: event.threadId, events: [] };
    const expected = (thread.snapshot?.version ?? 0) + thread.events.length + 1;
    if (event.version !== expected) {
      throw new Error(
        `line ${i + 2}: thread ${key} has version ${event.version} where ${expected} was expected (versions must be contiguous from 1, or from its snapshot)`,
      );
    }
    thread.events.push(event);
    threads.set(key, thread);
  });
  return { header: header as ExportHeader, threads: [...threads.values()] };
}

function snapshotLine(
  line: string,
  lineNo: number,
  tenantMap: ReadonlyMap<string, string>,
): ExportedSnapshot | undefined {
  if (!line.startsWith('{"snapshot"')) return undefined;
  const s = (JSON.parse(line) as { snapshot?: Partial<ExportedSnapshot> }).snapshot;
  if (
    !s ||
    typeof s.tenantId !== 'string' ||
    typeof s.threadId !== 'string' ||
    !Number.isInteger(s.version) ||
    (s.version ?? 0) < 1 ||
    typeof s.state !== 'object' ||
    s.state === null ||
    typeof s.runVersions !== 'object' ||
    s.runVersions === null
  ) {
    throw new Error(`line ${lineNo}: not a valid thread snapshot`);
  }
  const tenantId = tenantMap.get(s.tenantId) ?? s.tenantId;
  const state = tenantId === s.tenantId ? s.state : { ...s.state, tenantId };
  return { tenantId, threadId: s.threadId, version: s.version!, state, runVersions: s.runVersions };
}

/** `a=b,c=d` (repeatable) → map; tenants are subject tokens. */
export function parseTenantMap(values: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const pair of values.flatMap((v) => v.split(','))) {
    const m = /^([A-Za-z0-9_-]+)=([A-Za-z0-9_-]+)$/.exec(pair.trim());
    if (!m) throw new Error(`--tenant-map ${JSON.stringify(pair)}: expected from=to`);
    map.set(m[1]!, m[2]!);
  }
  return map;
}
