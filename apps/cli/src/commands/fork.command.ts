import { Command } from 'commander';
import { fork, type ForkOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parseVersion } from '../cli.parse';

export function forkCommand(): Command {
  return new Command('fork')
    .description(
      "create a new thread whose log is another thread's events 1..<version>, re-enveloped, with its projection",
    )
    .argument('<threadId>', 'the source thread')
    .requiredOption('--at <version>', 'the last source version the fork keeps', parseVersion)
    .option('--new-thread <threadId>', 'the id of the new thread (default: a random th_… id)')
    .option('--tenant <tenant>', "the source thread's tenant (found from the id when unique)")
    .addHelpText(
      'after',
      `
The fork's events get new ids and causationId = the source event's id; run and request ids are
renamed so the fork never shares idempotency keys with the source. A run still open at <version> is
closed in the fork with run.cancelled (reason "forked"), its open tool calls failed explicitly.

Examples:
  $ ratchet fork th_Q2x8mVn1pL0aZrT5yKe3wB --at 7
  $ ratchet fork th_Q2x8mVn1pL0aZrT5yKe3wB --at 7 --new-thread th_investigation_1 --json`,
    )
    .action(async (threadId: string, opts: ForkOptions, cmd: Command) => {
      await fork(commandContext(cmd), threadId, opts);
    });
}
