import { type ServiceName } from '@ratchet/adapters';
import { listFailures, outboxHealth, type FailedMessageRow, type OutboxHealth } from '@ratchet/adapters/operator';
import { withSchema, type CommandContext } from '../context';
import { EXIT } from '../errors';
import { formatAge, table } from '../format';
import { SERVICE_NAMES } from './migrate';

export interface OutboxOptions {
  service?: ServiceName;
  stuckAttempts: number;
  failed: number;
  /** Exit 1 when the oldest unsent row is older than this many seconds (for alerts and scripts). */
  maxAge?: number;
}

export interface OutboxReport extends OutboxHealth {
  service: ServiceName;
  schema: string;
  failed: FailedMessageRow[];
}

/** Per service schema: unsent rows, the age of the oldest, rows stuck after many attempts, recent failures. */
export async function showOutbox({ config, out }: CommandContext, opts: OutboxOptions): Promise<number> {
  const reports: OutboxReport[] = [];
  for (const service of opts.service ? [opts.service] : SERVICE_NAMES) {
    reports.push(
      await withSchema(config, service, async (db) => ({
        service,
        schema: db.schema,
        ...(await outboxHealth(db.sql, opts.stuckAttempts)),
        failed: opts.failed > 0 ? await listFailures(db.sql, opts.failed) : [],
      })),
    );
  }
  const late = (r: OutboxReport) =>
    opts.maxAge !== undefined && r.oldestUnsentAgeSeconds !== null && r.oldestUnsentAgeSeconds > opts.maxAge;
  const unhealthy = reports.filter((r) => r.stuck.length > 0 || late(r));
  if (out.json) {
    for (const r of reports) out.jsonLine(r);
  } else {
    const lines = table([
      ['SCHEMA', 'UNSENT', 'OLDEST UNSENT', `STUCK (>${opts.stuckAttempts} attempts)`, 'SENT LAST HOUR'],
      ...reports.map((r) => [
        r.schema,
        String(r.unsent),
        formatAge(r.oldestUnsentAgeSeconds),
        String(r.stuck.length),
        String(r.sentLastHour),
      ]),
    ]);
    out.line(out.style('bold', lines[0]!));
    reports.forEach((r, i) =>
      out.line(r.stuck.length > 0 || late(r) ? out.style('yellow', lines[i + 1]!) : lines[i + 1]!),
    );
    for (const r of reports) {
      for (const s of r.stuck)
        out.line(`  ${r.schema}: stuck ${s.id} → ${s.subject} (${s.attempts} attempts since ${s.createdAt})`);
    }
    printFailures(out, reports);
  }
  return unhealthy.length > 0 ? EXIT.failure : EXIT.ok;
}

export function printFailures(
  out: CommandContext['out'],
  reports: { schema: string; failed: FailedMessageRow[] }[],
): void {
  const failed = reports.flatMap((r) => r.failed.map((f) => ({ schema: r.schema, ...f })));
  if (failed.length === 0) return;
  out.line(out.style('bold', 'recent failed messages (newest first)'));
  for (const f of failed) {
    out.line(
      `  ${f.schema} #${f.id} ${f.failedAt} ${f.consumer} ${f.subject}${f.streamSeq === null ? '' : ` seq ${f.streamSeq}`}: ${f.code}: ${f.reason}`,
    );
  }
}
