import { Command } from 'commander';
import { showInbox, type InboxOptions } from '@ratchet/operator';
import { serviceOption } from '../cli.config';
import { commandContext } from '../cli.context';
import { parseNonNegativeInt } from '../cli.parse';

export function inboxCommand(): Command {
  return new Command('inbox')
    .description('per service schema: messages processed by each consumer (dedup inbox) and recent failed messages')
    .addOption(serviceOption())
    .option('--failed <n>', 'show the n most recent failed_messages per schema (0: none)', parseNonNegativeInt, 5)
    .addHelpText(
      'after',
      `
Examples:
  $ ratchet inbox
  $ ratchet inbox --service tools --failed 20`,
    )
    .action(async (opts: InboxOptions, cmd: Command) => {
      await showInbox(commandContext(cmd), opts);
    });
}
