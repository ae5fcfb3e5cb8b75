/**
 * `npm run bench` — prints figures, asserts nothing.
 *
 *   npm run bench                      every workload, a table
 *   npm run bench -- --json            the same as JSON (stdout); progress goes to stderr
 *   npm run bench -- --repeat 3        each figure measured 3 times: median and spread (min–max)
 *   npm run bench -- --quick           fewer runs (a smoke test, not figures to publish)
 *   npm run bench -- --only agent-loop|ledger|floor|resume|core|slow-model|first-token|tenant-flood|admission
 *   npm run bench -- --only tenant-flood [--flood 3000]
 *   npm run bench -- --only slow-model --slow-runs 1000,10000 --latency 1000 [--no-stream] [--model-limit]
 *     (--model-limit: the model's key under a provider limit that never binds, for the cost of a limit check)
 *   npm run bench -- --compare <ref>   runs this bench against <ref> (a temp git worktree) and against
 *                                      this tree, back to back, and prints ratios per figure
 *
 * Workloads: "floor" (the agent-loop as two bare single-row Postgres commits per step: every agent-loop
 * figure is also printed as a ratio to it, measured in the same repeat), "agent-loop" (the bench agent
 * through the real services, NATS and Postgres), "ledger" (the same with an idempotent tool on the
 * executor, through the effect ledger), resume cost
 * (one handle() on threads with 10…10,000 prior events), the core micro-benchmarks (pure decider,
 * durable appends/s), "slow-model" (N runs in flight on a model that takes L s per call, over HTTP) and
 * "first-token" (a streamed answer's first token, from the model server to a client of the gateway's SSE),
 * "tenant-flood" (p99 of one tenant's run latency alone, and while another floods run requests, with fair
 * shares and first come, first served).
 */
import { execSync } from 'node:child_process';
import os from 'node:os';
import { benchAgentLoop, type AgentLoopResult } from './agent-loop.bench';
import { compare } from './compare';
import { benchFloor, benchLoadAndStepFloor, type FloorResult } from './floor.bench';
import { benchAppends, benchDecide, benchSeal } from './core.bench';
import { benchAdmission, type AdmissionResult } from './admission.bench';
import { DEFAULT_DATABASE_URL } from './harness';
import { benchResume, type ResumeFigure } from './resume.bench';
import { benchSlowModel, type SlowModelResult } from './slow-model.bench';
import { benchFirstToken, type FirstTokenResult } from './streaming.bench';
import { benchTenantFlood, type TenantFloodResult } from './tenant-flood.bench';
import { figuresOf, spread, table, type Figure, type Summary } from './stats';

export interface BenchOutput {
  machine: { nproc: number; cpu: string; node: string; loadavg: number[]; commit: string };
  repeats: number;
  floor?: FloorResult[];
  agentLoop?: AgentLoopResult[];
  agentLoopLedger?: AgentLoopResult[];
  resume?: ResumeFigure[][];
  /** The resume floor of each repeat (see benchLoadAndStepFloor). */
  resumeFloor?: Summary[];
  core?: {
    decide: ReturnType<typeof benchDecide>;
    appends: Awaited<ReturnType<typeof benchAppends>>[];
    seal: Awaited<ReturnType<typeof benchSeal>>;
  };
  slowModel?: SlowModelResult[][];
  firstToken?: FirstTokenResult[];
  tenantFlood?: TenantFloodResult[];
  admission?: AdmissionResult[][];
  figures: Record<string, Figure>;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

async function run(): Promise<BenchOutput> {
  const quick = process.argv.includes('--quick');
  const repeats = Math.max(1, Number(arg('--repeat') ?? 1));
  const only = arg('--only');
  const want = (w: string) => !only || only.split(',').includes(w);
  const commit = (() => {
    try {
      return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const out: BenchOutput = {
    machine: {
      nproc: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      node: process.version,
      loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
      commit,
    },
    repeats,
    figures: {},
  };
  // The floor and the agent-loop variants take turns in each repeat, so they see the same machine.
  if (want('agent-loop') || want('ledger') || want('floor')) {
    const loop = quick
      ? { sequentialRuns: 10, concurrency: [1, 16, 64], runsPerWorker: 1, minRuns: 10 }
      : { sequentialRuns: 60, concurrency: [1, 16, 64], runsPerWorker: 3, minRuns: 30 };
    for (let r = 0; r < repeats; r++) {
      (out.floor ??= []).push(await benchFloor(loop, log));
      if (want('agent-loop')) (out.agentLoop ??= []).push(await benchAgentLoop(loop, log));
      if (want('ledger')) (out.agentLoopLedger ??= []).push(await benchAgentLoop({ ...loop, variant: 'ledger' }, log));
    }
  }
  if (want('resume')) {
    out.resume = [];
    const sizes = quick ? [10, 1000] : [10, 100, 1000, 10_000];
    for (let r = 0; r < repeats; r++) {
      // The floor right before the figures it divides, so both see the same machine.
      (out.resumeFloor ??= []).push(await benchLoadAndStepFloor(quick ? 5 : 15));
      out.resume.push(await benchResume(sizes, quick ? 5 : 15, log));
    }
  }
  if (want('core')) {
    // The appends run on a fresh copy of the migrated template on this server.
    process.env['DATABASE_URL'] ??= DEFAULT_DATABASE_URL;
    out.core = {
      decide: benchDecide(),
      appends: [await benchAppends(quick ? 200 : 1000, 1), await benchAppends(quick ? 800 : 4000, 16)],
      seal: await benchSeal(quick ? 500 : 2000),
    };
  }
  if (want('slow-model')) {
    out.slowModel = [];
    const sizes = (arg('--slow-runs') ?? (quick ? '200' : '1000,10000')).split(',').map(Number);
    const latencyMs = Number(arg('--latency') ?? 1000);
    for (let r = 0; r < repeats; r++) {
      const round: SlowModelResult[] = [];
      for (const runs of sizes)
        round.push(
          await benchSlowModel(
            {
              runs,
              latencyMs,
              jitterMs: latencyMs / 5,
              stream: !process.argv.includes('--no-stream'),
              limited: process.argv.includes('--model-limit'),
            },
            log,
          ),
        );
      out.slowModel.push(round);
    }
  }
  if (want('first-token')) {
    out.firstToken = [];
    for (let r = 0; r < repeats; r++)
      out.firstToken.push(await benchFirstToken({ runs: quick ? 10 : 50, latencyMs: 200, tokenMs: 20 }, log));
  }
  if (want('tenant-flood')) {
    out.tenantFlood = [];
    const flood = Number(arg('--flood') ?? (quick ? 1000 : 3000));
    for (let r = 0; r < repeats; r++)
      out.tenantFlood.push(await benchTenantFlood({ runs: quick ? 20 : 50, intervalMs: 100, flood }, log));
  }
  if (want('admission')) {
    process.env['DATABASE_URL'] ??= DEFAULT_DATABASE_URL;
    out.admission = [];
    for (let r = 0; r < repeats; r++)
      out.admission.push([await benchAdmission(quick ? 400 : 2000, 1), await benchAdmission(quick ? 2000 : 8000, 64)]);
  }
  out.machine.loadavg = os.loadavg().map((x) => Math.round(x * 100) / 100);
  out.figures = figuresOf(out);
  return out;
}

export function printTable(out: BenchOutput): string {
  const m = out.machine;
  const rows = Object.entries(out.figures).map(([name, f]) => ({
    figure: name,
    median: f.value,
    spread: f.values.length > 1 ? spread(f.values) : '-',
    unit: f.unit,
    target: f.target ?? '',
  }));
  return (
    `machine: nproc ${m.nproc}, ${m.cpu}, node ${m.node}, load average ${m.loadavg.join(' ')}, commit ${m.commit}; ` +
    `${out.repeats} repeat(s)\n\n${table(rows)}\n`
  );
}

async function main() {
  const ref = arg('--compare');
  if (ref) {
    await compare(ref, process.argv.slice(2), log);
    return;
  }
  const out = await run();
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  else process.stdout.write(printTable(out));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
