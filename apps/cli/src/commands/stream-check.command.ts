import { Command } from 'commander';
import { streamCheck, type StreamCheckOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function streamCheckCommand(): Command {
  return new Command('stream-check')
    .description(
      'compare the JetStream EVENTS stream with the Postgres log: missing, duplicated, reordered or unknown events',
    )
    .argument('[threadId]', 'one thread (else --all or --tenant)')
    .option('--all', 'every thread that has a log')
    .option('--tenant <tenant>', "the thread's tenant, or with no thread id: every thread of this tenant")
    .option('--after <tenant/thread>', 'with --all: start after this thread')
    .option('--repair', 'republish the missing events (Nats-Msg-Id = event id)')
    .addHelpText(
      'after',
      `
Postgres is the record and the stream a copy: events older than the stream's max age are "expired",
not missing. Exits 1 when events are missing (and not repaired) or the stream holds events the log
does not; duplicates and reordering are reported (readers dedupe and order by version) but exit 0.
Repaired events land at the end of the stream, so a later check shows them as reordered.

Examples:
  $ ratchet stream-check th_Q2x8mVn1pL0aZrT5yKe3wB
  $ ratchet stream-check --all --repair
  $ ratchet stream-check --tenant acme --json | jq 'select(.missing | length > 0)'`,
    )
    .action(async (threadId: string | undefined, opts: StreamCheckOptions, cmd: Command) => {
      process.exitCode = await streamCheck(commandContext(cmd), threadId, opts);
    });
}
