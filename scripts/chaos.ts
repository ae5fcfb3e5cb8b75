/**
 * `npm run chaos` — N runs (default 200) of the chaos agent while services are SIGKILLed, the private
 * nats-server and the private Postgres are killed and restarted and messages are delayed; then prints the
 * invariants and exits non-zero if any failed. `--logs <dir>` keeps every service's output there.
 *
 * `--cluster` runs it on a 3-node JetStream cluster on loopback (streams R3) whose nodes are SIGKILLed
 * and brought back one at a time, instead of one nats-server.
 *
 *   npm run chaos -- --runs 30 --seed 42 --json
 *   npm run chaos -- --cluster --runs 30
 */
import os from 'node:os';
import { table } from '../test/bench/stats';

// The suite imports @ratchet/testing, whose contract suites import jest's globals, and @jest/globals
// throws when loaded outside jest. The contracts are never run here: an empty module stands in for it.
const jestGlobals = require.resolve('@jest/globals');
require.cache[jestGlobals] = { id: jestGlobals, filename: jestGlobals, loaded: true, exports: {} } as NodeJS.Module;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<number> {
  const runs = Number(arg('--runs') ?? 200);
  const seed = Number(arg('--seed') ?? Date.now() % 1_000_000);
  const serviceLogDir = arg('--logs');
  const cluster = process.argv.includes('--cluster');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after the stand-in above
  const { runChaos } = require('../test/chaos/chaos') as typeof import('../test/chaos/chaos');
  const report = await runChaos({ runs, seed, cluster, ...(serviceLogDir ? { serviceLogDir } : {}) });
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    process.stdout.write(
      `machine: nproc ${os.cpus().length}, ${os.cpus()[0]?.model ?? '?'}, node ${process.version}, ` +
        `load average ${os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}\n` +
        `seed ${report.seed}, ${report.runs} runs, ${report.seconds} s; chaos: ${Object.entries(report.actions)
          .map(([k, v]) => `${v} × ${k}`)
          .join(', ')}; ${report.escalated} escalations answered and ` +
        `${report.approved} approvals granted by the operator\n\n` +
        `${table(report.invariants.map((i) => ({ invariant: i.name, result: i.value, ok: i.ok ? 'yes' : 'NO' })))}\n\n` +
        `${report.ok ? 'all invariants hold' : 'INVARIANTS FAILED'}\n`,
    );
  }
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);
