import { Command } from 'commander';
import { DEFAULT_TENANT } from '@ratchet/operator';
import { showEvents, type EventsOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parseVersion } from '../cli.parse';

export function eventsCommand(): Command {
  return new Command('events')
    .description(
      "print a thread's event log from Postgres (the system of record) as a timeline, optionally following it live",
    )
    .argument('<threadId>', 'the thread, e.g. th_Q2x8mVn1pL0aZrT5yKe3wB')
    .option(
      '--tenant <tenant>',
      `the tenant the thread belongs to (found from the id when unique; e.g. ${DEFAULT_TENANT})`,
    )
    .option('--from <version>', 'first version to show', parseVersion)
    .option('-f, --follow', "then tail the thread's live feed on NATS (no gap, no duplicate) until Ctrl-C")
    .option('--no-ledger', 'do not join tool requests with the effect ledger')
    .addHelpText(
      'after',
      `
Lines: version, time (UTC), type, summary. RETRY marks a repeated model call, RESUME a run resumed
after a lost worker; "[ledger succeeded ×2 RETRIED]" is the effect ledger's row for a tool request;
"trace <id>" appears wherever the trace id changes.

Examples:
  $ ratchet events th_Q2x8mVn1pL0aZrT5yKe3wB
  $ ratchet events th_Q2x8mVn1pL0aZrT5yKe3wB --tenant acme --from 12 --follow
  $ ratchet events th_Q2x8mVn1pL0aZrT5yKe3wB --json | jq -c 'select(.type == "tool.completed")'`,
    )
    .action(async (threadId: string, opts: EventsOptions, cmd: Command) => {
      await showEvents(commandContext(cmd), threadId, opts);
    });
}
