import { plural, withSchema, type CommandContext } from '../context';
import { CliError } from '../errors';
import { progressBar } from '../progress';
import { rebuildThread } from '@ratchet/platform';
import { keyOf, selectThreads } from '../ops/thread-selection';

export interface RebuildOptions {
  tenant?: string;
  thread?: string;
  after?: string;
}

/**
 * Rewrites projections from the log, one thread per transaction, in (tenant, thread) order. Each line
 * printed is a checkpoint: an interrupted rebuild resumes with `--after <tenant>/<thread>` of the last.
 */
export async function rebuild({ config, out }: CommandContext, opts: RebuildOptions): Promise<number> {
  const rebuilt = await withSchema(config, 'orchestrator', async (db) => {
    const keys = await selectThreads(db, opts.thread, { all: opts.thread === undefined, ...opts });
    const bar = progressBar(out, 'rebuilding', keys.length);
    let done = 0;
    for (const key of keys) {
      bar.update(done, keyOf(key));
      let result: Awaited<ReturnType<typeof rebuildThread>>;
      try {
        result = await rebuildThread(db, key.tenantId, key.threadId);
      } catch (error) {
        bar.finish();
        throw new CliError(
          `rebuilding ${keyOf(key)} failed after ${plural(done, 'thread')}: ${(error as Error).message}. ` +
            `Resume with --after ${keyOf(key)} once fixed (or --after the previous thread to retry it).`,
          undefined,
          'rebuild.failed',
          { cause: error },
        );
      }
      done += 1;
      const row = { tenantId: key.tenantId, threadId: key.threadId, version: result.version, runs: result.runs };
      if (out.json) out.jsonLine(row);
      else
        out.line(`${out.style('green', 'rebuilt')} ${keyOf(key)} v${result.version} (${plural(result.runs, 'run')})`);
    }
    bar.finish();
    return done;
  });
  if (!out.json) out.line(`${out.style('green', '✔')} ${plural(rebuilt, 'projection')} rebuilt from the log`);
  return 0;
}
