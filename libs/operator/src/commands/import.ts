import { readFile } from 'node:fs/promises';
import type { ThreadEvent } from '@ratchet/contracts';
import { diffProjections, foldRecord, recordFrom, runRowsOf } from '@ratchet/domain';
import { plural, withSchema, type CommandContext } from '../context';
import { CliError, EXIT } from '../errors';
import { progressBar } from '../progress';
import { parseExport, parseTenantMap, type ExportedSnapshot } from '../ops/export-format';
import { notIdleReason } from '../ops/thread-idle';
import { foldLog, logVersionOf, readThreadLog, runRowsOfLog, threadStore } from '@ratchet/platform';
import type { Database } from '@ratchet/adapters';

export interface ImportOptions {
  tenantMap: string[];
}

export type ImportOutcome = 'imported' | 'unchanged' | 'conflict';

/**
 * An export's event lines with their content opened (an export holds it as the log stored it, sealed
 * where it was sealed): what the import writes is sealed again with the destination thread's key. A line
 * whose key is destroyed (its thread or subject was erased) fails the import, naming it.
 */
async function openSealedLines(db: Database, text: string): Promise<string> {
  const lines = text.split('\n');
  const at: number[] = [];
  const events: { id: string; type: string; data: unknown }[] = [];
  lines.forEach((line, i) => {
    if (i === 0 || !line.includes('"enc":1')) return;
    try {
      const parsed = JSON.parse(line) as { id?: unknown; type?: unknown; data?: unknown };
      if (typeof parsed.id === 'string' && typeof parsed.type === 'string') {
        at.push(i);
        events.push(parsed as { id: string; type: string; data: unknown });
      }
    } catch {
      // not JSON: parseExport names the line
    }
  });
  if (events.length === 0) return text;
  const opened = await db.content.openEvents(events, 'throw');
  opened.forEach((e, k) => (lines[at[k]!] = JSON.stringify(e)));
  return lines.join('\n');
}

/**
 * Restores threads from an export: the whole file is checked first (header, every event decoded,
 * versions contiguous); then each thread in one transaction — its events and its projection folded
 * from them. A thread that exists already is left alone: identical content is a no-op (so an import
 * can be re-run), different content is a conflict (exit 1) and is never overwritten.
 */
export async function importThreads(
  { config, out }: CommandContext,
  file: string,
  opts: ImportOptions,
): Promise<number> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot import ${file}: ${(error as Error).message}`, undefined, 'import.invalid', {
      cause: error,
    });
  }
  const outcomes = await withSchema(config, 'orchestrator', async (db) => {
    let parsed: ReturnType<typeof parseExport>;
    try {
      parsed = parseExport(await openSealedLines(db, text), parseTenantMap(opts.tenantMap));
    } catch (error) {
      const code = (error as { code?: unknown }).code === 'content.sealed' ? 'import.sealed' : 'import.invalid';
      throw new CliError(`cannot import ${file}: ${(error as Error).message}`, undefined, code, { cause: error });
    }
    const store = threadStore(db);
    const bar = progressBar(out, 'importing', parsed.threads.length);
    const results: {
      tenantId: string;
      threadId: string;
      events: number;
      outcome: ImportOutcome;
      differences?: string[];
    }[] = [];
    for (const [i, t] of parsed.threads.entries()) {
      bar.update(i, `${t.tenantId}/${t.threadId}`);
      const result = await importOne(db, store, t).catch((error: unknown) => {
        // Event ids are unique across the whole log: the same events exist under another tenant or thread.
        if ((error as { constraint?: unknown }).constraint === 'thread_events_id_key') {
          const differences = ['events: their ids exist in this database under another tenant or thread'];
          return { outcome: 'conflict' as const, differences };
        }
        throw error;
      });
      const row = { tenantId: t.tenantId, threadId: t.threadId, events: t.events.length, ...result };
      results.push(row);
      if (out.json) out.jsonLine(row);
      else {
        const colour = row.outcome === 'imported' ? 'green' : row.outcome === 'conflict' ? 'red' : 'dim';
        out.line(
          `${out.style(colour, row.outcome.padEnd(9))} ${t.tenantId}/${t.threadId} (${plural(t.events.length, 'event')})`,
        );
        for (const d of row.differences ?? []) out.line(`  ${d}`);
      }
    }
    bar.finish();
    return results;
  });
  const conflicts = outcomes.filter((o) => o.outcome === 'conflict').length;
  if (!out.json) {
    const n = (o: ImportOutcome) => outcomes.filter((x) => x.outcome === o).length;
    const mark = conflicts > 0 ? out.style('red', '✘') : out.style('green', '✔');
    out.line(
      `${mark} ${n('imported')} imported, ${n('unchanged')} unchanged, ${conflicts} conflicting (not overwritten)`,
    );
  }
  return conflicts > 0 ? EXIT.failure : EXIT.ok;
}

type ImportResult = { outcome: ImportOutcome; differences?: string[] };
type ExportedThread = ReturnType<typeof parseExport>['threads'][number];

function importOne(db: Database, store: ReturnType<typeof threadStore>, t: ExportedThread): Promise<ImportResult> {
  // A thread exported while it was not idle has effects and approvals in flight the file does not carry:
  // refused, so the destination never repeats an at-most-once effect nor loses an approval.
  const state = foldLog({ snapshot: t.snapshot && { ...t.snapshot, eventsRemoved: 0 }, events: t.events }).state;
  const busy = notIdleReason(state);
  if (busy) {
    const why = `not idle in the export (${busy}): its effects and approvals in flight are not in the file; export it again once it is idle`;
    return Promise.resolve({ outcome: 'conflict', differences: [why] });
  }
  if (t.snapshot) return importCompacted(db, store, t, t.snapshot);
  return store.transaction(async (tx) => {
    const existing = await tx.loadEvents(t.tenantId, t.threadId, 0);
    if (existing.length > 0) {
      const differences = diffProjections(normalise(existing), normalise(t.events), 'events', [], 5);
      return differences.length === 0
        ? { outcome: 'unchanged' as const }
        : { outcome: 'conflict' as const, differences };
    }
    const record = foldRecord(recordFrom(), t.events);
    await tx.appendEvents(t.tenantId, t.threadId, 0, t.events);
    await tx.saveProjection(
      { tenantId: t.tenantId, threadId: t.threadId, version: t.events.length, state: record.state },
      runRowsOf(t.tenantId, t.threadId, record),
      { from: 1, messages: record.transcript, whole: true },
    );
    return { outcome: 'imported' as const };
  });
}

/**
 * A compacted thread: its snapshot, the events after it, the projection folded from both and the runs
 * rows, in one transaction. A thread that exists (a snapshot or any event) is compared: the same
 * snapshot and events are `unchanged`, anything else a conflict.
 */
async function importCompacted(
  db: Database,
  store: ReturnType<typeof threadStore>,
  t: ExportedThread,
  snapshot: ExportedSnapshot,
): Promise<ImportResult> {
  const existing = await readThreadLog(db, t.tenantId, t.threadId).catch(() => undefined);
  if (!existing || existing.snapshot || existing.events.length > 0) {
    const mine = { version: snapshot.version, state: snapshot.state, runVersions: snapshot.runVersions };
    const theirs = existing?.snapshot && {
      version: existing.snapshot.version,
      state: existing.snapshot.state,
      runVersions: existing.snapshot.runVersions,
    };
    const differences = [
      ...diffProjections(theirs ?? null, mine, 'snapshot', [], 5),
      ...diffProjections(normalise(existing?.events ?? []), normalise(t.events), 'events', [], 5),
    ];
    return differences.length === 0 ? { outcome: 'unchanged' } : { outcome: 'conflict', differences };
  }
  // Events removed here: none (they were removed where the export came from).
  const log = { snapshot: { ...snapshot, eventsRemoved: 0 }, events: t.events };
  const record = foldLog(log);
  await store.importCompacted(
    log.snapshot,
    t.events,
    { tenantId: t.tenantId, threadId: t.threadId, version: logVersionOf(log), state: record.state },
    runRowsOfLog(t.tenantId, t.threadId, record),
    { from: 1, messages: record.transcript, whole: true },
  );
  return { outcome: 'imported' };
}

/** Same instant, same text: timestamps may be written with another offset or precision. */
function normalise(events: readonly ThreadEvent[]): unknown[] {
  return events.map((e) => ({ ...e, at: new Date(e.at).toISOString() }));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
