import { Command } from 'commander';
import { showThreads, type ThreadsOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt, parseSince } from '../cli.parse';

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
