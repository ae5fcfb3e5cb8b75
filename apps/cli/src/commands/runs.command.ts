import { Command } from 'commander';
import { searchRuns, type RunListRow } from '@ratchet/adapters';
import { assertToken, commandContext, plural, withSchema, type CommandContext } from '../cli.context';
import { UsageError } from '../cli.errors';
import { parsePositiveInt, parseSince, table } from '../cli.parse';
import { call, gateway, withGatewayOptions, type GatewayOptions } from '../gateway';

const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'];

export interface RunsListOptions {
  tenant?: string;
  thread?: string;
  status?: string;
  agent?: string;
  since?: Date;
  until?: Date;
  limit: number;
}

/** Runs from the projection (`orchestrator.runs`), newest first: status, agent, thread, time. */
export async function showRuns({ config, out }: CommandContext, opts: RunsListOptions): Promise<RunListRow[]> {
  if (opts.tenant !== undefined) assertToken('tenant', opts.tenant);
  if (opts.thread !== undefined) assertToken('thread', opts.thread);
  if (opts.status !== undefined && !RUN_STATUSES.includes(opts.status))
    throw new UsageError(`invalid --status ${JSON.stringify(opts.status)}: one of ${RUN_STATUSES.join(', ')}`);
  const rows = await withSchema(config, 'orchestrator', (db) =>
    searchRuns(db.sql, {
      tenantId: opts.tenant,
      threadId: opts.thread,
      status: opts.status,
      agent: opts.agent,
      since: opts.since,
      until: opts.until,
      limit: opts.limit,
    }),
  );
  if (out.json) {
    for (const r of rows) out.jsonLine(r);
    return rows;
  }
  if (rows.length === 0) {
    out.note('no runs match');
    return rows;
  }
  const lines = table([
    ['TENANT', 'RUN', 'THREAD', 'STATUS', 'AGENT', 'STEPS', 'STARTED', 'ENDED'],
    ...rows.map((r) => [
      r.tenantId,
      r.runId,
      r.threadId,
      r.status,
      `${r.agent}@${r.agentVersion}`,
      String(r.steps),
      r.startedAt ?? '-',
      r.endedAt ?? '-',
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(`${plural(rows.length, 'run')}${rows.length === opts.limit ? ` (limit ${opts.limit}; raise --limit)` : ''}`);
  return rows;
}

/** Asks the gateway to cancel a run (needs the runner role); the run ends with `run.cancelled`. */
export async function cancelRun(
  { config, out }: CommandContext,
  runId: string,
  opts: GatewayOptions & { reason: string },
): Promise<unknown> {
  assertToken('run', runId);
  const target = gateway(config, opts);
  const body = await call(
    target,
    target.client.POST('/v1/runs/{runId}/cancel', { params: { path: { runId } }, body: { reason: opts.reason } }),
  );
  if (out.json) out.jsonLine(body);
  else out.line(`${out.style('green', '✔')} cancelling ${runId} on ${body.threadId}: it ends with run.cancelled`);
  return body;
}

function listCommand(name: string, description: string): Command {
  return new Command(name)
    .description(description)
    .option('--tenant <tenant>', 'only this tenant')
    .option('--thread <threadId>', 'only runs of this thread')
    .option('--status <status>', RUN_STATUSES.join(', '))
    .option('--agent <agent>', 'only runs of this agent')
    .option('--since <when>', 'started since a duration ago (2h, 7d) or a time (2026-11-30T09:00:00Z)', (v) =>
      parseSince(v),
    )
    .option('--until <when>', 'started before a duration ago or a time', (v) => parseSince(v))
    .option('--limit <n>', 'at most this many', parsePositiveInt, 100)
    .action(async (opts: RunsListOptions, cmd: Command) => {
      await showRuns(commandContext(cmd), opts);
    });
}

export function runsCommand(): Command {
  const runs = new Command('runs').description('runs: list and search them, cancel one');
  runs.addCommand(
    listCommand('list', 'list runs from the projection, newest first').addHelpText(
      'after',
      '\nExamples:\n  $ ratchet runs list --status running\n  $ ratchet runs list --tenant acme --json',
    ),
  );
  runs.addCommand(
    listCommand('search', 'find runs by status, agent, thread and start time').addHelpText(
      'after',
      '\nExamples:\n  $ ratchet runs search --agent support --status failed --since 1d\n  $ ratchet runs search --since 2026-12-01T00:00:00Z --until 2026-12-02T00:00:00Z',
    ),
  );
  runs.addCommand(
    withGatewayOptions(
      new Command('cancel')
        .description('cancel a run through the gateway (runner role); open tool calls are closed with results')
        .argument('<runId>', 'the run')
        .option('--reason <text>', 'why (recorded with run.cancel)', ''),
    )
      .addHelpText('after', '\nExamples:\n  $ ratchet runs cancel run_… --reason "stuck on a tool"')
      .action(async (runId: string, opts: GatewayOptions & { reason: string }, cmd: Command) => {
        await cancelRun(commandContext(cmd), runId, opts);
      }),
  );
  return runs;
}
