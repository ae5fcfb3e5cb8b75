import { Command } from 'commander';
import { showOutbox, type OutboxOptions } from '@ratchet/operator';
import { serviceOption } from '../cli.config';
import { commandContext } from '../cli.context';
import { parseNonNegativeInt, parsePositiveInt } from '../cli.parse';

export function outboxCommand(): Command {
  return new Command('outbox')
    .description('per service schema: unsent outbox rows, age of the oldest, stuck rows, recent failed messages')
    .addOption(serviceOption())
    .option('--stuck-attempts <n>', 'a row unsent after more than n publish attempts is stuck', parsePositiveInt, 5)
    .option('--failed <n>', 'show the n most recent failed_messages per schema (0: none)', parseNonNegativeInt, 5)
    .option('--max-age <seconds>', 'exit 1 when the oldest unsent row is older than this', parsePositiveInt)
    .addHelpText(
      'after',
      `
Exits 1 when a row is stuck (or, with --max-age, when the outbox lags more than that), else 0.

Examples:
  $ ratchet outbox
  $ ratchet outbox --service orchestrator --max-age 30
  $ ratchet outbox --json | jq 'select(.unsent > 0)'`,
    )
    .action(async (opts: OutboxOptions, cmd: Command) => {
      process.exitCode = await showOutbox(commandContext(cmd), opts);
    });
}
