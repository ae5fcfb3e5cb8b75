import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runIdFor } from '@ratchet/platform';
import { Stack, sleep } from './harness';
import { summarize, type Summary } from './stats';

/*
 * Workload "tenant-flood": tenant A starts a run every `intervalMs` (the `demo` agent, one scripted
 * model step) and measures each from its request's publish to its end; tenant B publishes `flood` run
 * requests straight on NATS, as fast as it can, right before A's first. Measured three times on
 * fresh stacks: A alone, A while B floods with fair shares (the default, TENANT_SHARE_PERCENT=50), and
 * A while B floods first come, first served (TENANT_SHARE_PERCENT=0).
 */

const AGENTS = path.resolve(__dirname, '../agents/loop');
const principal = { id: 'alice', roles: ['runner'] };

export interface TenantFloodOptions {
  /** Runs of tenant A. */
  runs: number;
  intervalMs: number;
  /** Run requests tenant B publishes at once. */
  flood: number;
}

export interface TenantFloodCase {
  case: 'alone' | 'flood, fair shares' | 'flood, first come first served';
  /** Tenant A's run latency, ms. */
  latency: Summary;
  /** Tenant B's runs that had ended when A's last run ended. */
  floodEndedBeforeA: number;
  /** Seconds until B's last run ended (0 alone). */
  floodSeconds: number;
}

export interface TenantFloodResult {
  runs: number;
  flood: number;
  cases: TenantFloodCase[];
}

export async function benchTenantFlood(o: TenantFloodOptions, log: (line: string) => void): Promise<TenantFloodResult> {
  const cases: TenantFloodCase[] = [];
  const plan = [
    { name: 'alone', flood: 0, share: '50' },
    { name: 'flood, fair shares', flood: o.flood, share: '50' },
    { name: 'flood, first come first served', flood: o.flood, share: '0' },
  ] as const;
  for (const p of plan) {
    log(`tenant-flood: ${p.name} (${o.runs} runs of A${p.flood ? `, ${p.flood} of B` : ''})`);
    const stack = await Stack.create();
    try {
      await Promise.all([
        // Every flood request is admitted (no bound on B's runs in flight): what is measured is how fairly
        // the consumers share their handlers, with all of B's runs in the way.
        stack.start('orchestrator', 'orchestrator', {
          AGENTS_DIR: AGENTS,
          TENANT_SHARE_PERCENT: p.share,
          TENANT_MAX_ACTIVE_RUNS: '0',
        }),
        stack.start('tool-executor'),
      ]);
      // Warm up both tenants' paths (agent catalog, connections) before measuring.
      await oneRun(stack, 'acme', 'warm-a');
      await oneRun(stack, 'flood', 'warm-b');
      const started = performance.now();
      const floodIds = Array.from({ length: p.flood }, (_, i) => `f-${i}`);
      let floodEnded = 0;
      const floodEnds = Promise.all(
        floodIds.map((id) => stack.waitTerminal(runIdFor('flood', id), 600_000).then(() => floodEnded++)),
      );
      for (let i = 0; i < floodIds.length; i += 200)
        await Promise.all(floodIds.slice(i, i + 200).map((id) => stack.publishRequest('flood', hello(id))));
      const latencies: number[] = [];
      const mine: Promise<void>[] = [];
      for (let i = 0; i < o.runs; i++) {
        const id = `a-${i}`;
        const t0 = performance.now();
        mine.push(
          (async () => {
            await stack.publishRequest('acme', hello(id));
            await stack.waitTerminal(runIdFor('acme', id), 600_000);
            latencies.push(performance.now() - t0);
          })(),
        );
        await sleep(o.intervalMs);
      }
      await Promise.all(mine);
      const floodEndedBeforeA = floodEnded;
      await floodEnds;
      cases.push({
        case: p.name,
        latency: summarize(latencies),
        floodEndedBeforeA,
        floodSeconds: p.flood ? (performance.now() - started) / 1000 : 0,
      });
    } finally {
      await stack.stop();
    }
  }
  return { runs: o.runs, flood: o.flood, cases };
}

function hello(requestId: string) {
  return { requestId, agent: 'demo', input: [{ role: 'user' as const, content: 'hello' }], principal };
}

async function oneRun(stack: Stack, tenant: string, id: string): Promise<void> {
  await stack.publishRequest(tenant, hello(id));
  await stack.waitTerminal(runIdFor(tenant, id), 60_000);
}
