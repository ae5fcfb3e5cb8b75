import { Command } from 'commander';
import { erase, type EraseOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function eraseCommand(): Command {
  return new Command('erase')
    .description("erasure request: remove a principal's threads, ledger rows, approvals and memory; leave a tombstone")
    .requiredOption(
      '--subject <principal>',
      'the principal whose data to remove (runs.principal_id, memory owner/subject)',
    )
    .option('--tenant <tenant>', 'only in this tenant (default: every tenant)')
    .option('--dry-run', 'count what would be removed; change nothing')
    .option('--operator <name>', 'who runs the erasure, for the tombstone (default: $USER)')
    .addHelpText(
      'after',
      `
Removes every thread with a run the subject started — its events, snapshot, projection, runs, its
EVENTS stream messages, effect-ledger rows (keys <tenant>:<thread>:…), approvals with decisions and
audit, and the outbox, inbox and failed-message rows naming it, in every schema — and the memory
items the subject owns or is about (through the memory service's forget-subject; directly in the
memory schema when the service does not answer, and the report says which). API keys are left alone.

Refuses (exit 1, nothing removed) while one of those threads has a run going. Writes one tombstone
per tenant to orchestrator.erasures: tenant, sha256(tenant NUL subject), counts, time, operator —
never the subject. Running it again removes nothing and says so.

Examples:
  $ ratchet erase --subject alice --dry-run
  $ ratchet erase --subject alice --tenant acme --operator "ticket-4711" --json`,
    )
    .action(async (opts: EraseOptions, cmd: Command) => {
      process.exitCode = await erase(commandContext(cmd), opts);
    });
}
