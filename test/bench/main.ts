/**
 * `npm run bench` — prints figures, asserts nothing. `--json` for machines.
 * Workloads: the pure decider's per-decision latency, and durable appends/s through Postgres.
 */
import os from 'node:os';
import { benchAppends, benchDecide } from './core.bench';
import { table } from './stats';

async function main() {
  const json = process.argv.includes('--json');
  const databaseUrl = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/ratchet';
  const decideStats = benchDecide();
  const seq = await benchAppends(databaseUrl, 1000, 1);
  const conc = await benchAppends(databaseUrl, 4000, 16);
  const result = {
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
    decide: decideStats,
    appends: [seq, conc],
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  process.stdout.write(`machine: ${result.machine.cpus} × ${result.machine.cpu}, node ${result.machine.node}\n\n`);
  process.stdout.write(
    `${table([{ workload: 'decide (pure, per decision)', n: decideStats.n, 'median ms': decideStats.median, 'p99 ms': decideStats.p99 }])}\n\n`,
  );
  process.stdout.write(
    `${table(
      [seq, conc].map((a) => ({
        workload: `append (1 tx each), ${a.concurrency} writer(s)`,
        'appends/s': Math.round(a.appendsPerSecond),
        'median ms': a.latency.median,
        'p99 ms': a.latency.p99,
      })),
    )}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).message}\n`);
  process.exit(1);
});
