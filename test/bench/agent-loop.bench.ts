import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runIdFor } from '@ratchet/platform';
import { Stack, sleep } from './harness';
import { summarize, type Summary } from './stats';

/*
 * Workload "agent-loop": the `bench` agent (agents/bench.yaml): S steps of one scripted model call
 * (zero latency) asking for one `bench.noop` pure tool call, then a final answer. Everything goes
 * through the real services (orchestrator + tool-executor as processes), NATS and Postgres.
 *
 * Variant "ledger": the same loop with an idempotent no-op tool on the tool executor
 * (`test/bench/tools/ledger-noop.tools.ts`, loaded with TOOL_MODULES), so every call takes the path of
 * a tool with an external effect: a tool-call command, the effect ledger, the result back to the inbox.
 */

const TENANT = 'bench';
export const STEPS = 10;

export interface AgentLoopOptions {
  sequentialRuns: number;
  concurrency: number[];
  /** Runs per concurrency level = max(minRuns, level × runsPerWorker). */
  runsPerWorker: number;
  minRuns: number;
  /** `local`: the bench agent's local pure tool (default); `ledger`: an idempotent tool on the executor. */
  variant?: 'local' | 'ledger';
}

export interface ThroughputFigure {
  concurrency: number;
  runs: number;
  seconds: number;
  stepsPerSecond: number;
  runLatency: Summary;
}

export interface AgentLoopResult {
  steps: number;
  /** Per-step overhead measured by the client: (request published → run.completed seen on the feed) / steps. */
  perStepClientMs: Summary;
  /** Per-step overhead from the log: (run.completed.at − run.started.at) / steps. */
  perStepEventMs: Summary;
  throughput: ThroughputFigure[];
  /** Per completed step, over the sequential phase. */
  pgCommitsPerStep: number;
  jsPublishesPerStep: number;
  jsPublishesPerStepByStream: Record<string, number>;
  /**
   * CPU time per completed step at the highest concurrency, ms: the whole machine's (services, Postgres,
   * nats-server and this client) and each service process's. What bounds throughput on a busy machine.
   */
  cpuMsPerStep: Record<string, number>;
  /** Peak resident set per service process, MiB (VmHWM). */
  peakMemoryMiB: Record<string, number>;
}

let counter = 0;

/** The bench agent with its tool on the executor, through the ledger (idempotent). */
const LEDGER_AGENT = [
  'name: bench-ledger',
  'model:',
  '  provider: scripted',
  '  script:',
  '    - when: { stepBelow: 11 }',
  '      call:',
  '        - { tool: bench.ledger_noop, args: {} }',
  "    - reply: 'done after {{step}} steps'",
  'tools:',
  '  - name: bench.ledger_noop',
  'maxSteps: 11',
  '',
].join('\n');

/**
 * One run, start to terminal event. With `eventTimes`, also its duration from its own event timestamps
 * (one primary-key range read of its thread's log); the throughput phases skip that read, so the client
 * adds no database work to what it measures.
 */
async function oneRun(
  stack: Stack,
  agent: string,
  eventTimes = false,
): Promise<{ clientMs: number; eventMs: number; ok: boolean }> {
  const requestId = `bench-${process.pid}-${Date.now()}-${counter++}`;
  const threadId = `th-${requestId}`;
  const runId = runIdFor(TENANT, requestId);
  const t0 = performance.now();
  const done = stack.waitTerminal(runId, 120_000);
  await stack.publishRequest(TENANT, {
    requestId,
    threadId,
    agent,
    input: [{ role: 'user', content: 'go' }],
    principal: { id: 'bench', roles: ['runner'] },
  });
  const terminal = await done;
  const clientMs = performance.now() - t0;
  const ok = terminal.type === 'run.completed';
  if (!eventTimes) return { clientMs, eventMs: NaN, ok };
  const events = await stack.orchestratorDb.sql.query<{ started: string; ended: string }>(
    `select (extract(epoch from min(at) filter (where type = 'run.started')) * 1000)::float8::text as started,
            (extract(epoch from max(at) filter (where type = 'run.completed')) * 1000)::float8::text as ended
     from ${stack.orchestratorDb.sql.table('thread_events')} where tenant_id = ? and thread_id = ?`,
    [TENANT, threadId],
  );
  const row = events[0];
  const eventMs = row ? Number(row.ended) - Number(row.started) : NaN;
  return { clientMs, eventMs, ok };
}

/**
 * pg_stat_database's commit count once every backend has reported. A backend reports its counters at
 * the end of a transaction only when its last report is a second old; otherwise (Postgres 15 and later)
 * once it has been idle for 10 s. Polling until the figure stopped moving returned early in a lull, and
 * the figure moved by up to ±40 % between runs of the same build: wait out the idle report instead.
 */
const STATS_IDLE_REPORT_MS = 11_000;
async function reportedCommits(stack: Stack): Promise<number> {
  await sleep(STATS_IDLE_REPORT_MS);
  return stack.xactCommits();
}

/**
 * Commits of the services while no run goes (their timers: outbox sweeps, schedule and webhook
 * checks), per ms, measured between two reported counts; subtracted from a phase's count for the time
 * it took, so the figure is what the runs cost.
 */
async function idleCommitsPerMs(stack: Stack, before: number): Promise<{ rate: number; after: number }> {
  const t0 = performance.now();
  const after = await reportedCommits(stack);
  // Our own reads: one each.
  return { rate: Math.max(0, after - before - 1) / (performance.now() - t0), after };
}

export async function benchAgentLoop(options: AgentLoopOptions, log: (line: string) => void): Promise<AgentLoopResult> {
  const ledger = options.variant === 'ledger';
  const agent = ledger ? 'bench-ledger' : 'bench';
  const name = ledger ? 'agent-loop (ledger)' : 'agent-loop';
  const stack = await Stack.create();
  try {
    if (ledger) {
      const agents = mkdtempSync(path.join(os.tmpdir(), 'ratchet-ledger-bench-'));
      writeFileSync(path.join(agents, 'bench-ledger.yaml'), LEDGER_AGENT);
      await stack.start('tool-executor', 'tool-executor', {
        TOOL_MODULES: path.resolve(__dirname, 'tools/ledger-noop.tools.ts'),
      });
      await stack.start('orchestrator', 'orchestrator', { AGENTS_DIR: agents });
    } else {
      await Promise.all([stack.start('orchestrator'), stack.start('tool-executor')]);
    }
    log(`${name}: services up; warming up`);
    for (let i = 0; i < 5; i++) await oneRun(stack, agent);
    await Promise.all(Array.from({ length: 16 }, () => oneRun(stack, agent)));

    // Sequential: per-step overhead, commits and publishes per step.
    const idle = await idleCommitsPerMs(stack, await reportedCommits(stack));
    const commits0 = idle.after;
    const phase0 = performance.now();
    const pubs0 = await stack.streamPublishes();
    const client: number[] = [];
    const fromEvents: number[] = [];
    for (let i = 0; i < options.sequentialRuns; i++) {
      const r = await oneRun(stack, agent, true);
      if (!r.ok) throw new Error('a bench run did not complete');
      client.push(r.clientMs / STEPS);
      fromEvents.push(r.eventMs / STEPS);
    }
    const pubs1 = await stack.streamPublishes();
    const commits1 = await reportedCommits(stack);
    const timersCommits = idle.rate * (performance.now() - phase0);
    const stepsDone = options.sequentialRuns * STEPS;
    // Our own queries in between: one select per run and the final read (autocommit each).
    const ownCommits = options.sequentialRuns + 1;
    const byStream: Record<string, number> = {};
    let pubTotal = 0;
    for (const k of Object.keys(pubs1)) {
      const d = (pubs1[k] ?? 0) - (pubs0[k] ?? 0);
      byStream[k] = d / stepsDone;
      pubTotal += d;
    }
    log(`${name}: sequential ${options.sequentialRuns} runs, median ${summarize(client).median.toFixed(2)} ms/step`);

    const throughput: ThroughputFigure[] = [];
    let cpuMsPerStep: Record<string, number> = {};
    for (const c of options.concurrency) {
      const runs = Math.max(options.minRuns, c * options.runsPerWorker);
      let next = 0;
      const latencies: number[] = [];
      const cpu0 = stack.cpuMs();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: c }, async () => {
          while (next < runs) {
            next++;
            const r = await oneRun(stack, agent);
            if (!r.ok) throw new Error('a bench run did not complete');
            latencies.push(r.clientMs);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = stack.cpuMs();
      cpuMsPerStep = { machine: (cpu1.machine - cpu0.machine) / (runs * STEPS) };
      for (const [svc, ms] of Object.entries(cpu1.services))
        cpuMsPerStep[svc] = (ms - (cpu0.services[svc] ?? ms)) / (runs * STEPS);
      const fig = {
        concurrency: c,
        runs,
        seconds,
        stepsPerSecond: (runs * STEPS) / seconds,
        runLatency: summarize(latencies),
      };
      throughput.push(fig);
      log(`${name}: ${c} concurrent, ${runs} runs: ${fig.stepsPerSecond.toFixed(0)} steps/s`);
    }
    const peak = stack.peakMemoryKb();
    return {
      steps: STEPS,
      perStepClientMs: summarize(client),
      perStepEventMs: summarize(fromEvents),
      throughput,
      pgCommitsPerStep: (commits1 - commits0 - ownCommits - timersCommits) / stepsDone,
      jsPublishesPerStep: pubTotal / stepsDone,
      jsPublishesPerStepByStream: byStream,
      cpuMsPerStep,
      peakMemoryMiB: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v / 102.4) / 10])),
    };
  } finally {
    await stack.stop();
  }
}
