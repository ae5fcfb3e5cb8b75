import {
  SERVICE_SCHEMAS,
  connectNats,
  ensureTopology,
  openServiceDatabase,
  redactUrl,
  type EnsureResult,
  type ServiceName,
} from '@ratchet/adapters';
import { type CliConfig } from '../config';
import { topologyFromConfig } from '@ratchet/platform';
import { type Output } from '../output';
import { ensureDatabase } from '../postgres-admin';

export const SERVICE_NAMES = Object.keys(SERVICE_SCHEMAS) as ServiceName[];

export interface MigrateOptions {
  /** One service's schema only; all of them when omitted. */
  service?: ServiceName;
  /** Also create/update the JetStream streams and consumers. Default true. */
  topology?: boolean;
}

export interface MigrateReport {
  database: { name: string; url: string; created: boolean };
  schemas: { service: ServiceName; schema: string; applied: string[]; total: number }[];
  topology?: { subjectPrefix: string; streamPrefix: string } & EnsureResult;
}

/** Applies every pending migration and ensures the bus topology. Idempotent: a second run changes nothing. */
export async function migrate(config: CliConfig, options: MigrateOptions, out: Output): Promise<MigrateReport> {
  const url = config.DATABASE_URL;
  const database = await ensureDatabase(url);
  if (!out.json) {
    const status = database.created ? out.style('green', 'created') : out.style('dim', 'exists');
    out.line(
      `${out.style('dim', 'database')} ${database.name.padEnd(28)} ${status} ${out.style('dim', `(${redactUrl(url)})`)}`,
    );
  }

  const schemas: MigrateReport['schemas'] = [];
  for (const service of options.service ? [options.service] : SERVICE_NAMES) {
    const db = await openServiceDatabase(url, service, 2);
    try {
      const applied = await db.migrate();
      const total = SERVICE_SCHEMAS[service].migrations.length;
      schemas.push({ service, schema: db.schema, applied, total });
      if (!out.json) {
        out.line(
          applied.length === 0
            ? `${out.style('dim', 'schema')}   ${db.schema.padEnd(28)} up to date (${plural(total, 'migration')})`
            : `${out.style('dim', 'schema')}   ${db.schema.padEnd(28)} ${out.style('green', `applied ${applied.length}`)}: ${applied.join(', ')}`,
        );
      }
    } finally {
      await db.close();
    }
  }

  const report: MigrateReport = { database: { ...database, url: redactUrl(url) }, schemas };
  if (options.topology ?? true) {
    const topology = topologyFromConfig(config);
    const nc = await connectNats({ url: config.NATS_URL, name: 'ratchet-cli', timeoutMs: 5_000 });
    try {
      const result = await ensureTopology(await nc.jetstreamManager(), topology);
      report.topology = { subjectPrefix: topology.subjectPrefix, streamPrefix: topology.streamPrefix, ...result };
      if (!out.json) {
        for (const [name, status] of Object.entries(result.streams))
          out.line(`${out.style('dim', 'stream')}   ${name.padEnd(28)} ${paint(out, status)}`);
        for (const [name, status] of Object.entries(result.consumers))
          out.line(`${out.style('dim', 'consumer')} ${name.padEnd(28)} ${paint(out, status)}`);
      }
    } finally {
      await nc.close().catch(() => undefined);
    }
  }

  if (out.json) {
    out.jsonLine(report);
  } else {
    const applied = schemas.reduce((n, s) => n + s.applied.length, 0);
    const bus = report.topology
      ? `; topology ${report.topology.streamPrefix}_* on ${report.topology.subjectPrefix}.> ensured`
      : '';
    out.line(
      `${out.style('green', '✔')} ${plural(schemas.length, 'schema')} migrated, ${plural(applied, 'migration')} applied${bus}`,
    );
  }
  return report;
}

function paint(out: Output, status: 'created' | 'updated' | 'unchanged'): string {
  return status === 'unchanged'
    ? out.style('dim', status)
    : out.style(status === 'created' ? 'green' : 'yellow', status);
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
