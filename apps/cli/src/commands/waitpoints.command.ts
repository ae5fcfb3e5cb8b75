import { Command } from 'commander';
import { completeWaitpoint, type CompleteWaitpointOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { withGatewayOptions } from '../gateway-options';

export function waitpointsCommand(): Command {
  const waitpoints = new Command('waitpoints').description(
    'runs waiting for the outside world: complete a waitpoint (list them with `approvals list`, kind waitpoint)',
  );
  waitpoints.addCommand(
    withGatewayOptions(
      new Command('complete')
        .description('complete a waitpoint with a result, or report that the job outside failed (runner role)')
        .argument('<waitpointId>', 'the waitpoint id (wp_…, from approvals list or the run’s events)')
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
