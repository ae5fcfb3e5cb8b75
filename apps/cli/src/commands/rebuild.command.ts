import { Command } from 'commander';
import { rebuild, type RebuildOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function rebuildCommand(): Command {
  return new Command('rebuild')
    .description('rebuild projections (the threads row and the runs rows) from the event log, resumably')
    .option('--tenant <tenant>', "only this tenant's threads")
    .option('--thread <threadId>', 'only this thread')
    .option('--after <tenant/thread>', 'resume: start after this thread (threads go in tenant, thread order)')
    .addHelpText(
      'after',
      `
One transaction per thread; each "rebuilt" line is a checkpoint. If a rebuild stops, rerun it with
--after <tenant>/<thread> of the last line printed. Safe while the orchestrator runs.

Examples:
  $ ratchet rebuild --thread th_Q2x8mVn1pL0aZrT5yKe3wB
  $ ratchet rebuild --tenant acme
  $ ratchet rebuild --after acme/th_Q2x8mVn1pL0aZrT5yKe3wB`,
    )
    .action(async (opts: RebuildOptions, cmd: Command) => {
      process.exitCode = await rebuild(commandContext(cmd), opts);
    });
}
