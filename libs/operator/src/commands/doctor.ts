import type { JetStreamManager } from 'nats';
import { redactNatsUrl, redactUrl, type ConsumerSpec, type StreamSpec } from '@ratchet/adapters';
import { databaseNow } from '@ratchet/adapters/operator';
import { topologyFromConfig } from '@ratchet/platform';
import { openSchema, withNats, type CommandContext } from '../context';
import { EXIT } from '../errors';
import { SERVICE_NAMES } from './migrate';

export interface DoctorOptions {
  maxSkewMs: number;
}

export interface Check {
  area: 'postgres' | 'migrations' | 'clock' | 'nats' | 'stream' | 'consumer';
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * One look at everything a deployment depends on: Postgres reachable, migrations applied per schema,
 * clock skew to Postgres, NATS reachable, streams and consumers as `topologyFromConfig` declares them
 * (the same declaration the services ensure), and each consumer's backlog.
 */
export async function doctor({ config, out }: CommandContext, opts: DoctorOptions): Promise<number> {
  const checks: Check[] = [];
  const add = (c: Check) => {
    checks.push(c);
    if (out.json) out.jsonLine(c);
    else
      out.line(
        `${c.ok ? out.style('green', 'ok  ') : out.style('red', 'FAIL')}  ${c.area.padEnd(10)} ${c.name.padEnd(28)} ${c.detail}`,
      );
  };
  await checkPostgres(config, opts, add);
  try {
    await withNats(config, async (nc) => {
      add({ area: 'nats', name: redactNatsUrl(config.NATS_URL), ok: true, detail: `connected to ${nc.getServer()}` });
      await checkTopology(await nc.jetstreamManager(), topologyFromConfig(config), add);
    });
  } catch (error) {
    add({
      area: 'nats',
      name: redactNatsUrl(config.NATS_URL),
      ok: false,
      detail: (error as Error).message.split('\n')[0]!,
    });
  }
  const failed = checks.filter((c) => !c.ok);
  if (!out.json) {
    out.line(
      failed.length === 0
        ? `${out.style('green', '✔')} all ${checks.length} checks passed`
        : `${out.style('red', '✘')} ${failed.length} of ${checks.length} checks failed`,
    );
  }
  return failed.length > 0 ? EXIT.failure : EXIT.ok;
}

type Add = (c: Check) => void;

async function checkPostgres(config: CommandContext['config'], opts: DoctorOptions, add: Add): Promise<void> {
  const safe = redactUrl(config.DATABASE_URL);
  let first = true;
  for (const service of SERVICE_NAMES) {
    let db;
    try {
      db = await openSchema(config, service, 1);
    } catch (error) {
      add({ area: 'postgres', name: safe, ok: false, detail: (error as Error).message.split('\n')[0]! });
      return;
    }
    try {
      if (first) {
        first = false;
        const before = Date.now();
        const now = Date.parse(await databaseNow(db.sql));
        const after = Date.now();
        // The database read its clock somewhere in the round trip: compare with the midpoint.
        const skew = now - (before + after) / 2;
        add({ area: 'postgres', name: safe, ok: true, detail: `connected (round trip ${after - before} ms)` });
        add({
          area: 'clock',
          name: 'this host vs postgres now()',
          ok: Math.abs(skew) <= opts.maxSkewMs,
          detail: `skew ${Math.round(skew)} ms (±${Math.ceil((after - before) / 2)} ms; limit ${opts.maxSkewMs} ms)`,
        });
      }
      const pending = await db.pendingMigrations();
      add({
        area: 'migrations',
        name: `schema ${db.schema}`,
        ok: pending.length === 0,
        detail:
          pending.length === 0
            ? 'up to date'
            : `${pending.length} pending: ${pending.join(', ')} (run ratchet migrate)`,
      });
    } finally {
      await db.close();
    }
  }
}

async function checkTopology(
  jsm: JetStreamManager,
  topology: ReturnType<typeof topologyFromConfig>,
  add: Add,
): Promise<void> {
  for (const spec of topology.streams) {
    const name = spec.config.name;
    const info = await jsm.streams.info(name).catch(() => undefined);
    if (!info) {
      add({ area: 'stream', name, ok: false, detail: 'missing (run ratchet migrate, or start a service)' });
      continue;
    }
    const diff = differences(spec.config, info.config as unknown as Record<string, unknown>);
    add({
      area: 'stream',
      name,
      ok: diff.length === 0,
      detail: diff.length === 0 ? `${info.state.messages} messages` : `differs: ${diff.join('; ')}`,
    });
  }
  for (const spec of topology.consumers) {
    const info = await jsm.consumers.info(spec.stream, spec.name).catch(() => undefined);
    if (!info) {
      add({ area: 'consumer', name: spec.name, ok: false, detail: `missing on ${spec.stream}` });
      continue;
    }
    const diff = differences(consumerCompared(spec), info.config as unknown as Record<string, unknown>);
    add({
      area: 'consumer',
      name: spec.name,
      ok: diff.length === 0,
      detail: `${diff.length === 0 ? '' : `differs: ${diff.join('; ')}; `}pending ${info.num_pending}, unacked ${info.num_ack_pending}, redelivered ${info.num_redelivered}`,
    });
  }
}

/** With a backoff list the server replaces ack_wait by backoff[0]: do not report that as drift. */
function consumerCompared(spec: ConsumerSpec): Record<string, unknown> {
  const { ack_wait, ...rest } = spec.config;
  return spec.config.backoff ? rest : { ...rest, ack_wait };
}

/** `key: declared X, server Y` for every key the topology sets that the server has otherwise. */
export function differences(
  declared: StreamSpec['config'] | Record<string, unknown>,
  actual: Record<string, unknown>,
): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(declared)) {
    if (v === undefined) continue;
    if (JSON.stringify(v) !== JSON.stringify(actual[k]))
      out.push(`${k}: declared ${JSON.stringify(v)}, server ${JSON.stringify(actual[k])}`);
  }
  return out;
}
