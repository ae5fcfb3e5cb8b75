import { plural, withSchema, type CommandContext } from '../context';
import { EXIT } from '../errors';
import { progressBar } from '../progress';
import { verifyThread, type Verification } from '@ratchet/platform';
import { keyOf, selectThreads, type SelectionOptions } from '../ops/thread-selection';

export interface ReplayOptions extends SelectionOptions {
  verify?: boolean;
}

/**
 * Folds each selected thread's log with the current code and compares it with the stored projection.
 * Returns the exit code: 1 when `--verify` found a divergence.
 */
export async function replay(
  { config, out }: CommandContext,
  threadId: string | undefined,
  opts: ReplayOptions,
): Promise<number> {
  const results = await withSchema(config, 'orchestrator', async (db) => {
    const keys = await selectThreads(db, threadId, opts);
    const bar = progressBar(out, 'replaying', keys.length);
    const found: Verification[] = [];
    for (const [i, key] of keys.entries()) {
      bar.update(i, keyOf(key));
      const v = await verifyThread(db, key.tenantId, key.threadId);
      found.push(v);
      if (out.json) out.jsonLine(v);
      else if (v.divergences.length > 0 || keys.length === 1) printOne(out, v);
    }
    bar.finish();
    return found;
  });
  const diverged = results.filter((r) => r.divergences.length > 0);
  if (!out.json) {
    const summary = `${plural(results.length, 'thread')} replayed, ${plural(diverged.length, 'divergent projection')}`;
    out.line(diverged.length === 0 ? `${out.style('green', '✔')} ${summary}` : `${out.style('red', '✘')} ${summary}`);
    if (diverged.length > 0) {
      out.line(
        out.style(
          'dim',
          `fix with: ratchet rebuild ${diverged.length === 1 ? `--thread ${diverged[0]!.threadId}` : ''}`,
        ),
      );
    }
  }
  return opts.verify && diverged.length > 0 ? EXIT.failure : EXIT.ok;
}

function printOne(out: CommandContext['out'], v: Verification): void {
  const head = `${v.tenantId}/${v.threadId} log v${v.logVersion}, projection ${v.storedVersion === null ? 'missing' : `v${v.storedVersion}`}`;
  if (v.divergences.length === 0) {
    out.line(`${out.style('green', 'ok')}        ${head}`);
    return;
  }
  out.line(`${out.style('red', 'DIVERGED')}  ${head}`);
  for (const d of v.divergences) out.line(`  ${d}`);
}
