import { Command } from 'commander';
import { importThreads, type ImportOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function importCommand(): Command {
  return new Command('import')
    .description(
      'restore threads from an export (JSON lines): events and a rebuilt projection, one transaction per thread',
    )
    .argument('<file>', 'the export file, or - for stdin')
    .option(
      '--tenant-map <from=to>',
      'import tenant <from> as <to> (repeatable, or comma-separated)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .addHelpText(
      'after',
      `
Every line is checked before anything is written. Re-importing identical threads changes nothing;
a thread that exists with different content is reported as a conflict, never overwritten (exit 1).
--tenant-map changes the events' tenant only; ids inside the data (idempotency keys) keep the old one.

Examples:
  $ ratchet import thread.jsonl
  $ ratchet import acme.jsonl --tenant-map acme=acme-staging
  $ gunzip -c acme.jsonl.gz | ratchet import -`,
    )
    .action(async (file: string, opts: ImportOptions, cmd: Command) => {
      process.exitCode = await importThreads(commandContext(cmd), file, opts);
    });
}
