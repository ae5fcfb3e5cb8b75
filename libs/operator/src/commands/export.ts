import { listThreadKeysWithSnapshots } from '@ratchet/adapters/operator';
import { type ThreadKey } from '@ratchet/adapters';
import { assertToken, plural, resolveTenant, withSchema, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { progressBar } from '../progress';
import {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  EXPORT_FORMAT_VERSION_SNAPSHOTS,
  type ExportHeader,
} from '../ops/export-format';
import { notIdleReason } from '../ops/thread-idle';
import { foldLog, readThreadLog, threadStore, type ThreadLog } from '@ratchet/platform';

export interface ExportOptions {
  tenant?: string;
  /**
   * Write content in clear: an operator's decision (the export then holds what erasing the thread can
   * no longer reach). By default content is written as the log stores it, sealed where it was sealed.
   */
  decrypt?: boolean;
}

/**
 * Writes threads' logs to stdout as JSON lines: a header, then every event of every thread in version
 * order. Always JSON (it is a backup format); progress goes to stderr. Only idle threads: one named
 * that is not idle is refused (`export.busy`, nothing written), and a tenant's export leaves such
 * threads out and names them on stderr — their effects and approvals in flight would not move with them.
 * Content is written as stored (sealed with its thread's key, ADR 0034), so erasing a thread later makes
 * its content in this export unreadable too; `decrypt` writes it in clear.
 */
export async function exportThreads(
  { config, out }: CommandContext,
  threadId: string | undefined,
  opts: ExportOptions,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<{ threads: number; events: number }> {
  if (threadId === undefined && opts.tenant === undefined) throw new UsageError('give a thread id or --tenant <t>');
  return withSchema(config, 'orchestrator', async (db) => {
    let keys: ThreadKey[];
    if (threadId !== undefined) {
      keys = [{ tenantId: await resolveTenant(db, threadId, opts.tenant), threadId }];
    } else {
      assertToken('tenant', opts.tenant!);
      keys = await listThreadKeysWithSnapshots(db.sql, { tenantId: opts.tenant });
    }
    // Read before writing the header, so the header's counts are true for what follows.
    const logs: (ThreadLog & { written: readonly object[] })[] = [];
    const leftOut: string[] = [];
    const bar = progressBar(out, 'exporting', keys.length);
    for (const [i, key] of keys.entries()) {
      bar.update(i, `${key.tenantId}/${key.threadId}`);
      const log = await readThreadLog(db, key.tenantId, key.threadId);
      const busy = notIdleReason(foldLog(log).state);
      if (busy && threadId !== undefined) {
        bar.finish();
        throw new CliError(
          `thread ${key.tenantId}/${key.threadId} is not idle (${busy}): its effects and approvals in flight ` +
            'would not move with it. Export it once its run ended (or cancel it). Nothing was written.',
          undefined,
          'export.busy',
        );
      }
      if (busy) leftOut.push(`${key.tenantId}/${key.threadId} (${busy})`);
      else {
        // What is written: the events as stored (sealed where they were), the same versions as read.
        const written = opts.decrypt
          ? log.events
          : (await threadStore(db).readStoredEvents(key.tenantId, key.threadId, log.snapshot?.version ?? 0)).slice(
              0,
              log.events.length,
            );
        logs.push({ ...log, written });
      }
    }
    bar.finish();
    for (const t of leftOut) process.stderr.write(`left out, not idle: ${t}\n`);
    const events = logs.reduce((n, l) => n + l.events.length, 0);
    const snapshots = logs.filter((l) => l.snapshot !== undefined).length;
    // A compacted thread is exported as its snapshot line followed by the events after it (format 2).
    const header: ExportHeader = {
      format: EXPORT_FORMAT,
      formatVersion: snapshots > 0 ? EXPORT_FORMAT_VERSION_SNAPSHOTS : EXPORT_FORMAT_VERSION,
      exportedAt: new Date().toISOString(),
      threads: logs.length,
      events,
      ...(snapshots > 0 ? { snapshots } : {}),
    };
    write(JSON.stringify(header));
    for (const log of logs) {
      if (log.snapshot) {
        const { tenantId, threadId, version, state, runVersions } = log.snapshot;
        write(JSON.stringify({ snapshot: { tenantId, threadId, version, state, runVersions } }));
      }
      for (const e of log.written) write(JSON.stringify(e));
    }
    process.stderr.write(`exported ${plural(logs.length, 'thread')}, ${plural(events, 'event')}\n`);
    return { threads: logs.length, events };
  });
}
