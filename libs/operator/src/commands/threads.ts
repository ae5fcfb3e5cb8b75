import { listThreads, type ThreadListRow } from '@ratchet/adapters/operator';
import { assertToken, plural, withSchema, type CommandContext } from '../context';
import { table } from '../format';

export interface ThreadsOptions {
  tenant?: string;
  status?: string;
  agent?: string;
  since?: Date;
  limit: number;
}

/** Lists threads from the projection (`orchestrator.threads` with their latest `runs` row), newest first. */
export async function showThreads({ config, out }: CommandContext, opts: ThreadsOptions): Promise<ThreadListRow[]> {
  if (opts.tenant !== undefined) assertToken('tenant', opts.tenant);
  const rows = await withSchema(config, 'orchestrator', (db) =>
    listThreads(db.sql, {
      tenantId: opts.tenant,
      status: opts.status,
      agent: opts.agent,
      since: opts.since,
      limit: opts.limit,
    }),
  );
  if (out.json) {
    for (const r of rows) out.jsonLine(r);
    return rows;
  }
  if (rows.length === 0) {
    out.note('no threads match');
    return rows;
  }
  const lines = table([
    ['TENANT', 'THREAD', 'STATUS', 'AGENT', 'VERSION', 'RUNS', 'LAST RUN', 'UPDATED'],
    ...rows.map((r) => [
      r.tenantId,
      r.threadId,
      r.status,
      r.agent ?? r.lastRun?.agent ?? '-',
      `v${r.version}`,
      String(r.runs),
      r.lastRun ? `${r.lastRun.runId} ${r.lastRun.status}` : '-',
      r.updatedAt,
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(
    `${plural(rows.length, 'thread')}${rows.length === opts.limit ? ` (limit ${opts.limit}; raise --limit)` : ''}`,
  );
  return rows;
}
