import { EffectLedgerRepository, type Database } from '@ratchet/adapters';
import { subjects, type ThreadEvent } from '@ratchet/contracts';
import { type CliConfig } from '../config';
import { openSchema, resolveTenant, withNats, withSchema, type CommandContext } from '../context';
import { CliError } from '../errors';
import { followFeed } from '../ops/feed-follow';
import { threadStore } from '@ratchet/platform';
import { formatTimeline } from '../timeline/format-timeline';

export interface EventsOptions {
  /** The thread's tenant; found from the thread id when omitted and unique. */
  tenant?: string;
  /** First version to show (inclusive). */
  from?: number;
  /** After the stored log, keep printing the thread's live feed until interrupted. */
  follow?: boolean;
  /** Join tool requests with the effect ledger (default true; `--no-ledger`). */
  ledger?: boolean;
}

/**
 * Prints a thread's log from Postgres: a timeline (retries and resumes marked, trace ids, tool calls
 * with their ledger state), or one JSON event per line with --json. With `follow`, then tails the
 * live feed until `stop` resolves, printing each version exactly once and in order.
 */
export async function showEvents(
  { config, out }: CommandContext,
  threadId: string,
  options: EventsOptions,
  stop: Promise<void> = interrupted(),
): Promise<ThreadEvent[]> {
  const db = await openSchema(config, 'orchestrator');
  try {
    const tenant = await resolveTenant(db, threadId, options.tenant);
    const from = options.from ?? 1;
    const store = threadStore(db);
    const shown: ThreadEvent[] = await store.readEvents(tenant, threadId, from - 1, 'erased').catch(migrateFirst);
    let printedLines = 0;
    const print = async (fresh: ThreadEvent[]) => {
      if (out.json) {
        for (const event of fresh) out.jsonLine(event);
        return;
      }
      const ledger = options.ledger === false ? undefined : await readLedger(config, tenant, threadId);
      // Formatted as one log, so a super-step stays grouped across batches; only new lines are printed.
      const lines = formatTimeline(shown, { style: out.style, ledger, traces: true });
      for (const line of lines.slice(printedLines)) out.line(line);
      printedLines = lines.length;
    };
    if (shown.length === 0 && !options.follow) {
      if (from > 1) {
        out.note(`thread ${threadId} (tenant ${tenant}) has no events from v${from} on`);
        return shown;
      }
      throw new CliError(`thread ${threadId} has no events in tenant ${tenant}`, undefined, 'thread.not_found');
    }
    if (!out.json && shown.length > 0) {
      const last = shown.at(-1)!;
      out.line(
        out.style('bold', `thread ${threadId}`) +
          out.style(
            'dim',
            ` · tenant ${tenant} · v${shown[0]!.version}–v${last.version} · ${shown.length} event${shown.length === 1 ? '' : 's'}`,
          ),
      );
    }
    await print(shown);
    if (!options.follow) return shown;

    let lastVersion = shown.at(-1)?.version ?? from - 1;
    out.note(out.style('dim', `… following ${tenant}/${threadId} from v${lastVersion + 1} (Ctrl-C to stop)`));
    await withNats(config, (nc) =>
      followFeed(nc, subjects(config.RATCHET_SUBJECT_PREFIX).feed(tenant, threadId), stop, async (event) => {
        if (event.version <= lastVersion) return; // already printed: the stored log or a redelivery
        // Postgres is the record: whatever the feed skipped (or has not delivered yet) is read from there.
        const fresh = await store.readEvents(tenant, threadId, lastVersion, 'erased');
        if (fresh.length === 0) return;
        shown.push(...fresh);
        lastVersion = fresh.at(-1)!.version;
        await print(fresh);
      }),
    );
    return shown;
  } finally {
    await db.close();
  }
}

async function readLedger(config: CliConfig, tenant: string, threadId: string) {
  try {
    const rows = await withSchema(config, 'tools', (tools: Database) =>
      new EffectLedgerRepository(tools.sql).listByThread(tenant, threadId),
    );
    return new Map(rows.map((r) => [r.key, { state: r.state, attempts: r.attempts }]));
  } catch {
    return undefined; // no tools schema here (e.g. a database holding an import only): no ledger column
  }
}

function migrateFirst(error: unknown): never {
  if ((error as { code?: unknown }).code === '42P01') {
    throw new CliError(
      'no orchestrator.thread_events table: run `ratchet migrate` first',
      undefined,
      'database.not_migrated',
      {
        cause: error,
      },
    );
  }
  throw error;
}

/** Resolves on the first SIGINT or SIGTERM: a follow ends cleanly with exit 0. */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
