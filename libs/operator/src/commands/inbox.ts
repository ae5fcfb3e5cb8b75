import { type ServiceName } from '@ratchet/adapters';
import { inboxHealth, listFailures, type FailedMessageRow, type InboxHealth } from '@ratchet/adapters/operator';
import { withSchema, type CommandContext } from '../context';
import { table } from '../format';
import { SERVICE_NAMES } from './migrate';
import { printFailures } from './outbox';

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
