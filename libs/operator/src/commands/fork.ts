import { randomUUID } from 'node:crypto';
import { ConcurrencyError, runRowsOf } from '@ratchet/domain';
import { assertToken, plural, resolveTenant, withSchema, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { planFork } from '../ops/thread-fork';
import { threadStore } from '@ratchet/platform';

export interface ForkOptions {
  at: number;
  newThread?: string;
  tenant?: string;
}

const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/** Creates a new thread from the first `--at` events of another, with a projection folded from them. */
export async function fork({ config, out }: CommandContext, sourceThreadId: string, opts: ForkOptions) {
  const newThreadId = opts.newThread ?? newId('th');
  assertToken('new thread id', newThreadId);
  if (newThreadId === sourceThreadId) throw new UsageError('--new-thread must differ from the source thread');
  const result = await withSchema(config, 'orchestrator', async (db) => {
    const tenantId = await resolveTenant(db, sourceThreadId, opts.tenant);
    const store = threadStore(db);
    const source = await store.readEvents(tenantId, sourceThreadId);
    let plan: ReturnType<typeof planFork>;
    try {
      plan = planFork(source, opts.at, newThreadId, new Date().toISOString(), {
        eventId: () => newId('ev'),
        id: newId,
      });
    } catch (error) {
      throw new CliError(
        `cannot fork ${tenantId}/${sourceThreadId}: ${(error as Error).message}`,
        undefined,
        'fork.invalid',
      );
    }
    const version = plan.events.at(-1)!.version;
    try {
      await store.transaction(async (tx) => {
        await tx.appendEvents(tenantId, newThreadId, 0, plan.events);
        await tx.saveProjection(
          { tenantId, threadId: newThreadId, version, state: plan.state },
          runRowsOf(tenantId, newThreadId, plan.record),
          { from: 1, messages: plan.record.transcript, whole: true },
        );
      });
    } catch (error) {
      if (error instanceof ConcurrencyError) {
        throw new CliError(
          `thread ${tenantId}/${newThreadId} already exists: pick another --new-thread`,
          undefined,
          'fork.exists',
        );
      }
      throw error;
    }
    return {
      tenantId,
      sourceThreadId,
      threadId: newThreadId,
      at: opts.at,
      version,
      cancelledRuns: plan.cancelledRuns,
      renamed: plan.renamed,
    };
  });
  if (out.json) {
    out.jsonLine(result);
  } else {
    out.line(
      `${out.style('green', '✔')} forked ${result.tenantId}/${sourceThreadId} at v${opts.at} → ${out.style('bold', result.threadId)} (v${result.version})`,
    );
    if (result.cancelledRuns.length > 0) {
      out.line(
        `  ${plural(result.cancelledRuns.length, 'run')} in flight at v${opts.at} cancelled in the fork (reason "forked"): ${result.cancelledRuns.join(', ')}`,
      );
    }
    out.line(out.style('dim', `  see it with: ratchet events ${result.threadId} --tenant ${result.tenantId}`));
  }
  return result;
}
