import { Command } from 'commander';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from '@ratchet/operator';
import { exportThreads, type ExportOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function exportCommand(): Command {
  return new Command('export')
    .description("write a thread's (or a tenant's) event logs as JSON lines to stdout: backup, restore, move")
    .argument('[threadId]', 'one thread (else --tenant)')
    .option('--tenant <tenant>', "the thread's tenant, or with no thread id: every thread of this tenant")
    .option('--decrypt', 'write content in clear (by default as stored: sealed where RATCHET_KEY_FILE seals it)')
    .addHelpText(
      'after',
      `
Line 1 is a header {"format":"${EXPORT_FORMAT}","formatVersion":${EXPORT_FORMAT_VERSION},…}; every other line is one
event, threads one after the other in version order. Projections are not exported: import rebuilds them.
A thread compacted by \`ratchet retention\` is exported as one {"snapshot":{…}} line (the folded state
its deleted events left) followed by the events after it; such exports have formatVersion 2.
Content (messages, tool arguments and results) is written as the log stores it: sealed with its
thread's key where content is sealed at rest, so erasing the thread later leaves this copy unreadable
too. --decrypt writes it in clear. Import opens it with the same deployment's keys.

Examples:
  $ ratchet export th_Q2x8mVn1pL0aZrT5yKe3wB > thread.jsonl
  $ ratchet export --tenant acme | gzip > acme-$(date +%F).jsonl.gz`,
    )
    .action(async (threadId: string | undefined, opts: ExportOptions, cmd: Command) => {
      await exportThreads(commandContext(cmd), threadId, opts);
    });
}
