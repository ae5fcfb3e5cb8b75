/**
 * `npm run soak` — the soak's long form: for each of N seeds, M minutes of requests over the HTTP API (every
 * scenario a deployment mixes) while services, tool processes, nats-server and Postgres are killed; prints
 * each seed's figures and invariants and the totals, and exits non-zero if any invariant failed.
 *
 *   npm run soak -- --seeds 20 --minutes 2
 *   npm run soak -- --seeds 1 --minutes 1 --seed 42 --logs /tmp/soak-logs
 */
import os from 'node:os';
import { table } from '../test/bench/stats';

// The soak imports @ratchet/testing, whose contract suites import jest's globals, and @jest/globals throws
// when loaded outside jest. The contracts are never run here: an empty module stands in for it.
const jestGlobals = require.resolve('@jest/globals');
require.cache[jestGlobals] = { id: jestGlobals, filename: jestGlobals, loaded: true, exports: {} } as NodeJS.Module;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<number> {
  const seeds = Number(arg('--seeds') ?? 3);
  const minutes = Number(arg('--minutes') ?? 1);
  const first = Number(arg('--seed') ?? Date.now() % 1_000_000);
  const serviceLogDir = arg('--logs');
  if (!Number.isInteger(seeds) || seeds < 1)
    throw new Error(`--seeds must be a whole number ≥ 1, not ${arg('--seeds')}`);
  if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, not ${arg('--minutes')}`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after the stand-in above
  const { runSoak } = require('../test/soak/soak') as typeof import('../test/soak/soak');
  process.stdout.write(`machine: nproc ${os.cpus().length}, ${os.cpus()[0]?.model ?? '?'}, node ${process.version}\n`);
  const totals = { requests: 0, kills: 0, natsRestarts: 0, postgresRestarts: 0, effects: 0, resent: 0, failed: 0 };
  for (let i = 0; i < seeds; i++) {
    const seed = first + i;
    const report = await runSoak({
      seed,
      seconds: minutes * 60,
      ...(serviceLogDir ? { serviceLogDir: `${serviceLogDir}/${seed}` } : {}),
    });
    totals.requests += report.requests;
    totals.kills += report.actions['SIGKILL service'] ?? 0;
    totals.natsRestarts += report.actions['restart nats-server'] ?? 0;
    totals.postgresRestarts += report.actions['restart postgres'] ?? 0;
    totals.effects += report.effects;
    totals.resent += report.resent;
    if (!report.ok) totals.failed++;
    process.stdout.write(
      `\nseed ${seed}: ${report.requests} requests (${JSON.stringify(report.scenarios)}), ${report.seconds} s, ` +
        `${report.resent} HTTP requests resent (${JSON.stringify(report.resentBecause)}), ` +
        `${report.cancelsBeforeKnown} cancels asked again (404: accepted, not processed yet); faults ${JSON.stringify(report.actions)}; ` +
        `decisions ${JSON.stringify(report.decisions)}; ${report.effects} effects at the far side\n` +
        `${table(report.invariants.map((x) => ({ invariant: x.name, result: x.value, ok: x.ok ? 'yes' : 'NO' })))}\n`,
    );
  }
  process.stdout.write(
    `\n${seeds} seeds: ${totals.requests} requests, ${totals.kills} SIGKILLs, ${totals.natsRestarts} nats-server ` +
      `restarts, ${totals.postgresRestarts} Postgres crashes, ${totals.effects} effects, ${totals.resent} HTTP ` +
      `requests resent; ${totals.failed === 0 ? 'every invariant held in every seed' : `${totals.failed} seeds FAILED`}\n`,
  );
  return totals.failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);
