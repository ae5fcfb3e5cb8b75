import { Command } from 'commander';
import {
  cancelRun,
  RUN_STATUSES,
  RUN_WAITS,
  showRuns,
  type GatewayOptions,
  type RunsListOptions,
} from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt, parseSince } from '../cli.parse';
import { withGatewayOptions } from '../gateway-options';

function listCommand(name: string, description: string): Command {
  return withGatewayOptions(
    new Command(name)
      .description(description)
      .option('--thread <threadId>', 'only runs of this thread')
      .option('--status <status>', RUN_STATUSES.join(', '))
      .option('--waiting <what>', `only runs waiting for a human: ${RUN_WAITS.join(', ')}`)
      .option('--agent <agent>', 'only runs of this agent')
      .option('--since <when>', 'started since a duration ago (2h, 7d) or a time (2026-11-30T09:00:00Z)', (v) =>
        parseSince(v),
      )
      .option('--until <when>', 'started before a duration ago or a time', (v) => parseSince(v))
      .option(
        '--metadata <key=value>',
        "the run request's metadata holds this pair (repeat for several)",
        (v: string, all: string[]) => [...all, v],
        [] as string[],
      )
      .option('--limit <n>', 'at most this many', parsePositiveInt, 100),
  ).action(async (opts: RunsListOptions, cmd: Command) => {
    await showRuns(commandContext(cmd), opts);
  });
}

export function runsCommand(): Command {
  const runs = new Command('runs').description('runs: list and search them, cancel one');
  runs.addCommand(
    listCommand('list', "list your tenant's runs through the gateway, newest first").addHelpText(
      'after',
      '\nExamples:\n  $ ratchet runs list --status running\n  $ ratchet runs list --waiting approval\n  $ ratchet runs list --agent support --json',
    ),
  );
  runs.addCommand(
    listCommand('search', 'find runs by status, agent, thread, start time and request metadata').addHelpText(
      'after',
      '\nExamples:\n  $ ratchet runs search --agent support --status failed --since 1d\n  $ ratchet runs search --metadata customer=c-42 --since 2026-12-01T00:00:00Z --until 2026-12-02T00:00:00Z',
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
