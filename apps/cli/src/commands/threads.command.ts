import { Command } from 'commander';
import { listThreads, type ThreadListRow } from '@ratchet/adapters/operator';
import { assertToken, commandContext, plural, withSchema, type CommandContext } from '../cli.context';
import { parsePositiveInt, parseSince, table } from '../cli.parse';

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

export function threadsCommand(): Command {
  return new Command('threads')
    .description('list threads from the projection (status, agent, version, latest run), newest first')
    .option('--tenant <tenant>', 'only this tenant')
    .option('--status <status>', 'idle, running or queued')
    .option('--agent <agent>', 'only threads whose active or any run used this agent')
    .option('--since <when>', 'updated since a duration ago (2h, 7d) or a time (2026-11-30T09:00:00Z)', (v) =>
      parseSince(v),
    )
    .option('--limit <n>', 'at most this many', parsePositiveInt, 100)
    .addHelpText(
      'after',
      `
Examples:
  $ ratchet threads --status running
  $ ratchet threads --tenant acme --agent support --since 2h
  $ ratchet threads --json | jq -r 'select(.lastRun.status == "failed") | .threadId'`,
    )
    .action(async (opts: ThreadsOptions, cmd: Command) => {
      await showThreads(commandContext(cmd), opts);
    });
}
