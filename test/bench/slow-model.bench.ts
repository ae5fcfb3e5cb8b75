import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runIdFor } from '@ratchet/platform';
import { Stack, sleep } from './harness';
import { summarize, type Summary } from './stats';

/*
 * Workload "slow-model": runs on a model that takes L seconds (with jitter) to answer, over HTTP against
 * an OpenAI-compatible server in a process of its own. Each run is 3 steps (two rounds of a local no-op
 * tool call, then the answer). N runs are put in flight at once. What it shows is what the harness adds
 * to a slow model, at many runs in flight, with the default settings: how many model calls a step took
 * (must be 1), the overhead per step ((run time − model time) / steps), memory and connections.
 */

const TENANT = 'bench';
const ROOT = path.resolve(__dirname, '../..');
export const SLOW_STEPS = 3;

export interface SlowModelOptions {
  runs: number;
  latencyMs: number;
  jitterMs: number;
  /** Ask the model server to stream (the default for `openai` agents); false: whole answers. */
  stream?: boolean;
  /**
   * Put the model's key under a provider limit that never binds (docs/flow-control.md): every call asks it
   * and settles it, so the figures against a run without show what a limit check costs per model call.
   */
  limited?: boolean;
}

export interface SlowModelResult {
  runs: number;
  limited?: boolean;
  latencyMs: number;
  completed: number;
  seconds: number;
  /** Model calls the provider received, per step the runs took. */
  modelCallsPerStep: number;
  /** (run time − its model calls' time) / steps, per run; run time from the request's publish to its end. */
  overheadPerStepMs: Summary;
  /** The same with run time from its `run.started` to its end (admission queueing left out). */
  overheadPerStepFromStartMs: Summary;
  peakMemoryMiB: Record<string, number>;
  /** Most Postgres connections to the bench's database at once (sampled every 250 ms). */
  postgresConnections: number;
}

export class ModelProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(): Promise<ModelProcess> {
    const child = spawn(process.execPath, ['scripts/run-ts.mjs', 'libs/testing/src/fake-model-server.main.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /listening (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`the fake model server exited (${code})`)));
    });
    return new ModelProcess(child, url);
  }

  async stats(): Promise<{
    totals: { calls: number };
    conversations: Record<string, { durations: number[]; firstTokens: number[] }>;
  }> {
    const res = await fetch(`${this.url.replace(/\/v1$/, '')}/_stats`);
    return (await res.json()) as never;
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}

export async function benchSlowModel(options: SlowModelOptions, log: (line: string) => void): Promise<SlowModelResult> {
  const model = await ModelProcess.start();
  const agents = mkdtempSync(path.join(os.tmpdir(), 'ratchet-slow-bench-'));
  writeFileSync(
    path.join(agents, 'slow-bench.yaml'),
    [
      'name: slow-bench',
      'model:',
      '  provider: openai',
      '  name: fake-1',
      `  baseUrl: ${model.url}`,
      `  stream: ${options.stream ?? true}`,
      'tools:',
      '  - name: bench.noop',
      `maxSteps: ${SLOW_STEPS}`,
      '',
    ].join('\n'),
  );
  // One tenant puts every run in flight at once: the bound on a tenant's runs in flight (default 1,000)
  // is raised to the workload's size, the one setting changed from the defaults.
  const stack = await Stack.create({
    env: {
      AGENTS_DIR: agents,
      OPENAI_API_KEY: 'sk-bench',
      TENANT_MAX_ACTIVE_RUNS: String(Math.max(1000, options.runs)),
      ...(options.limited
        ? {
            MODEL_LIMITS: JSON.stringify([
              {
                name: 'bench',
                baseUrl: model.url,
                apiKeyEnv: 'OPENAI_API_KEY',
                requests: 10_000_000,
                tokens: 2_000_000_000,
                concurrent: 1_000_000,
              },
            ]),
          }
        : {}),
    },
  });
  let sampling = true;
  let postgresConnections = 0;
  try {
    await Promise.all([stack.start('orchestrator'), stack.start('tool-executor')]);
    const sampler = (async () => {
      while (sampling) {
        const rows = await stack.orchestratorDb.sql
          .query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database()`)
          .catch(() => [{ n: 0 }]);
        postgresConnections = Math.max(postgresConnections, rows[0]?.n ?? 0);
        await sleep(250);
      }
    })();
    const directives = `[latency=${options.latencyMs}] [jitter=${options.jitterMs}] [call=bench.noop] [rounds=${SLOW_STEPS - 1}]`;
    const ids = Array.from({ length: options.runs }, (_, i) => `slow-${process.pid}-${Date.now()}-${i}`);
    const published = new Map<string, number>();
    const ended = new Map<string, number>();
    const t0 = performance.now();
    const waits = ids.map((id) =>
      stack.waitTerminal(runIdFor(TENANT, id), 30 * 60_000).then((e) => {
        ended.set(id, performance.now());
        return e;
      }),
    );
    // Published as fast as the bus takes them, 200 at a time.
    for (let i = 0; i < ids.length; i += 200) {
      await Promise.all(
        ids.slice(i, i + 200).map(async (id) => {
          published.set(id, performance.now());
          await stack.publishRequest(TENANT, {
            requestId: id,
            threadId: `th-${id}`,
            agent: 'slow-bench',
            input: [{ role: 'user', content: `${id} ${directives}` }],
            principal: { id: 'bench', roles: ['runner'] },
          });
        }),
      );
    }
    log(`slow-model: ${options.runs} runs published in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    let completed = 0;
    const progress = setInterval(() => log(`slow-model: ${ended.size}/${options.runs} runs ended`), 10_000);
    for (const w of waits) if ((await w).type === 'run.completed') completed++;
    clearInterval(progress);
    const seconds = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    const stats = await model.stats();
    const durationsOf = new Map(
      Object.entries(stats.conversations).map(([key, c]) => [
        key.split(' ')[0]!,
        c.durations.reduce((a, b) => a + b, 0),
      ]),
    );
    const starts = await stack.orchestratorDb.sql.query<{ thread_id: string; started: string; ended: string }>(
      `select thread_id, (extract(epoch from min(at) filter (where type = 'run.started')) * 1000)::float8::text as started,
              (extract(epoch from max(at) filter (where type = 'run.completed')) * 1000)::float8::text as ended
         from ${stack.orchestratorDb.sql.table('thread_events')}
        where tenant_id = ? and type in ('run.started', 'run.completed') group by thread_id`,
      [TENANT],
    );
    const fromStart = new Map(starts.map((r) => [r.thread_id.slice(3), Number(r.ended) - Number(r.started)]));
    const overhead: number[] = [];
    const overheadFromStart: number[] = [];
    for (const id of ids) {
      const model = durationsOf.get(id) ?? NaN;
      overhead.push(((ended.get(id) ?? NaN) - (published.get(id) ?? NaN) - model) / SLOW_STEPS);
      overheadFromStart.push(((fromStart.get(id) ?? NaN) - model) / SLOW_STEPS);
    }
    const peak = stack.peakMemoryKb();
    return {
      runs: options.runs,
      ...(options.limited ? { limited: true } : {}),
      latencyMs: options.latencyMs,
      completed,
      seconds,
      modelCallsPerStep: stats.totals.calls / (options.runs * SLOW_STEPS),
      overheadPerStepMs: summarize(overhead.filter(Number.isFinite)),
      overheadPerStepFromStartMs: summarize(overheadFromStart.filter(Number.isFinite)),
      peakMemoryMiB: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v / 102.4) / 10])),
      postgresConnections,
    };
  } finally {
    sampling = false;
    await stack.stop();
    model.stop();
  }
}
