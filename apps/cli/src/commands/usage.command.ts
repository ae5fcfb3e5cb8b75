import { Command } from 'commander';
import { showUsage, type UsageOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt, parseSince } from '../cli.parse';

/** What a tenant's model calls spent, asked of the orchestrators (`<prefix>.threads.<tenant>.usage`). */
export function usageCommand(): Command {
  return new Command('usage')
    .description("what a tenant's model calls spent (tokens; days and months in UTC)")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option(
      '--from <when>',
      'answered since a duration ago (7d) or a time or day (2026-12-01: its UTC midnight); default: this UTC month',
      (v) => parseSince(v),
    )
    .option('--to <when>', 'answered before a duration ago or a time or day', (v) => parseSince(v))
    .option('--by <dimensions>', 'group by day, month, agent, model, run (comma-separated, in this order)')
    .option('--agent <agent>', 'only calls of this agent')
    .option('--model <model>', 'only calls answered by this model')
    .option('--run <runId>', 'only calls of this run')
    .option('--limit <n>', 'at most this many groups', parsePositiveInt, 1000)
    .addHelpText(
      'after',
      '\nExamples:\n  $ ratchet usage --tenant acme --by day,model\n  $ ratchet usage --tenant acme --from 2026-11-01 --to 2026-12-01 --by agent --json',
    )
    .action(async (opts: UsageOptions, cmd: Command) => {
      await showUsage(commandContext(cmd), opts);
    });
}
