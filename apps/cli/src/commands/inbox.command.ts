import { Command } from 'commander';
import { type ServiceName } from '@ratchet/adapters';
import { inboxHealth, listFailures, type FailedMessageRow, type InboxHealth } from '@ratchet/adapters/operator';
import { commandContext, withSchema, type CommandContext } from '../cli.context';
import { parseNonNegativeInt, table } from '../cli.parse';
import { SERVICE_NAMES } from './migrate.command';
import { printFailures, serviceOption } from './outbox.command';

export interface InboxOptions {
  service?: ServiceName;
  failed: number;
}

export interface InboxReport extends InboxHealth {
  service: ServiceName;
  schema: string;
  failed: FailedMessageRow[];
}

/** Per service schema and consumer: messages processed (all time, last hour), the latest, recent failures. */
export async function showInbox({ config, out }: CommandContext, opts: InboxOptions): Promise<InboxReport[]> {
  const reports: InboxReport[] = [];
  for (const service of opts.service ? [opts.service] : SERVICE_NAMES) {
    reports.push(
      await withSchema(config, service, async (db) => ({
        service,
        schema: db.schema,
        ...(await inboxHealth(db.sql)),
        failed: opts.failed > 0 ? await listFailures(db.sql, opts.failed) : [],
      })),
    );
  }
  if (out.json) {
    for (const r of reports) out.jsonLine(r);
    return reports;
  }
  const lines = table([
    ['SCHEMA', 'CONSUMER', 'PROCESSED', 'LAST HOUR', 'LAST PROCESSED'],
    ...reports.flatMap((r) =>
      r.consumers.length === 0
        ? [[r.schema, '-', '0', '0', '-']]
        : r.consumers.map((c) => [
            r.schema,
            c.consumer,
            String(c.processed),
            String(c.lastHour),
            c.lastProcessedAt ?? '-',
          ]),
    ),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  printFailures(out, reports);
  return reports;
}

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
