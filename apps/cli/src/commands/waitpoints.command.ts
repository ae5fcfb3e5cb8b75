import { Command } from 'commander';
import {
  completeWaitpoint,
  listWaitpoints,
  type CompleteWaitpointOptions,
  type WaitpointsListOptions,
} from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt } from '../cli.parse';
import { withGatewayOptions } from '../gateway-options';

export function waitpointsCommand(): Command {
  const waitpoints = new Command('waitpoints').description(
    'runs waiting for the outside world: list waitpoints, complete one',
  );
  waitpoints.addCommand(
    withGatewayOptions(
      new Command('list')
        .description('the waitpoints of your tenant, oldest first')
        .option('--status <status>', 'pending, completed, failed, expired or cancelled')
        .option('--thread <threadId>', 'only this thread')
        .option('--agent <agent>', 'only runs of this agent')
        .option('--limit <n>', 'at most this many (500)', parsePositiveInt),
    )
      .addHelpText(
        'after',
        '\nExamples:\n  $ ratchet waitpoints list --status pending\n  $ ratchet waitpoints list --json',
      )
      .action(async (opts: WaitpointsListOptions, cmd: Command) => {
        await listWaitpoints(commandContext(cmd), opts);
      }),
  );
  waitpoints.addCommand(
    withGatewayOptions(
      new Command('complete')
        .description('complete a waitpoint with a result, or report that the job outside failed (runner role)')
        .argument('<waitpointId>', 'the waitpoint id (wp_…, from waitpoints list or the run’s events)')
        .option('--result <json>', 'the result the run goes on with (must fit the schema the tool declared)')
        .option('--error <code>', 'instead of a result: the job failed, with this code')
        .option('--message <text>', 'with --error: what went wrong, for the model'),
    )
      .addHelpText(
        'after',
        `\nExamples:\n  $ ratchet waitpoints complete wp_… --result '{"build":42,"status":"green"}'\n  $ ratchet waitpoints complete wp_… --error ci.failed --message "the build failed"`,
      )
      .action(async (id: string, opts: CompleteWaitpointOptions, cmd: Command) => {
        await completeWaitpoint(commandContext(cmd), id, opts);
      }),
  );
  return waitpoints;
}
