import type { ThreadEvent } from '@ratchet/contracts';
import { openServiceDatabase, type Database } from '@ratchet/adapters';
import { runIdFor } from '@ratchet/platform';
import { ledgerEffects, weatherRunRequest, type ServiceProcess } from '@ratchet/testing';
import { TestStack } from './stack';

/**
 * What Kubernetes does on every rollout, scale-in and node drain: SIGTERM a replica while it works.
 * The replica stops pulling, finishes what it holds, and exits 0 within SHUTDOWN_GRACE_MS (+ the 5 s
 * the service allows itself before it gives up with exit 1); the other replica takes everything else;
 * no run is lost or completed twice and no tool effect runs twice.
 */
const TENANT = 'acme';
const RUNS = 60;
const SHUTDOWN_GRACE_MS = 5_000;
/** start-service.ts exits 1 at SHUTDOWN_GRACE_MS + 5 s if the drain never finishes. */
const MARGIN_MS = 5_000;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

const request = (i: number) => weatherRunRequest('drain', i);

/** SIGTERM and how the process ended, with the time from the signal to its exit. */
async function terminate(svc: ServiceProcess) {
  const sent = Date.now();
  await svc.kill('SIGTERM');
  const { code, signal } = await svc.exited;
  return { name: svc.name, code, signal, exitMs: Date.now() - sent, logs: svc.logs };
}

describe('graceful drain: SIGTERM in the middle of runs', () => {
  let stack: TestStack;
  let tools: Database;
  beforeEach(async () => {
    stack = await TestStack.create();
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
  });
  afterEach(async () => {
    await tools.close();
    await stack.stop();
  });

  it('one replica each of orchestrator and tool executor is stopped mid-stream: every run completes once elsewhere', async () => {
    const env = { SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS) };
    const [orchestrator1] = await Promise.all([
      stack.start('orchestrator', env, 'orchestrator-1'),
      stack.start('orchestrator', env, 'orchestrator-2'),
    ]);
    const [tools1] = await Promise.all([
      stack.start('tool-executor', env, 'tools-1'),
      stack.start('tool-executor', env, 'tools-2'),
    ]);

    const requests = Array.from({ length: RUNS }, (_, i) => request(i));
    let stopping: Promise<Awaited<ReturnType<typeof terminate>>[]> | undefined;
    let unfinishedAtSigterm = 0;
    for (const [i, r] of requests.entries()) {
      await stack.publishRequest(TENANT, r);
      if (i === RUNS / 3) {
        // Runs are in flight: a third published, most of them not finished yet.
        const done = await Promise.all(
          requests
            .slice(0, i + 1)
            .map(async (x) =>
              (await stack.events(TENANT, x.threadId)).some(
                (e) => e.runId === runIdFor(TENANT, x.requestId) && TERMINAL.has(e.type),
              ),
            ),
        );
        unfinishedAtSigterm = done.filter((d) => !d).length;
        stopping = Promise.all([terminate(orchestrator1), terminate(tools1)]);
      }
      await new Promise((res) => setTimeout(res, 25));
    }
    const stopped = await stopping!;

    for (const s of stopped) {
      // Exit is measured from the signal; nothing else here is timed.
      expect([s.name, s.code, s.signal]).toEqual([s.name, 0, null]);
      expect(s.exitMs).toBeLessThan(SHUTDOWN_GRACE_MS + MARGIN_MS);
      expect(s.logs).not.toContain('still running');
    }

    const logs = new Map<string, ThreadEvent[]>();
    for (const r of requests) {
      const runId = runIdFor(TENANT, r.requestId);
      logs.set(
        r.threadId,
        await stack.waitFor(
          TENANT,
          r.threadId,
          (ev) => ev.some((e) => e.runId === runId && TERMINAL.has(e.type)),
          120_000,
        ),
      );
    }
    const requested: string[] = [];
    const completed: string[] = [];
    for (const r of requests) {
      const events = logs.get(r.threadId)!;
      expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
      expect([r.requestId, events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)]).toEqual([
        r.requestId,
        ['run.completed'],
      ]);
      const callIds = (type: string) =>
        events.filter((e) => e.type === type).map((e) => `${e.runId}/${(e.data as { callId: string }).callId}`);
      requested.push(...callIds('tool.requested'));
      completed.push(...callIds('tool.completed'));
    }
    expect(requested).toHaveLength(2 * RUNS);
    expect(completed.slice().sort()).toEqual(requested.slice().sort());
    // A drained executor finished every effect it started: none was cut off and executed again.
    const effects = await ledgerEffects(tools.sql, TENANT);
    expect(effects).toHaveLength(2 * RUNS);
    expect(effects.filter((e) => e.attempts !== 1 || e.state !== 'succeeded')).toEqual([]);

    process.stdout.write(
      `graceful drain: ${unfinishedAtSigterm} of ${RUNS / 3 + 1} published runs unfinished at SIGTERM; ` +
        stopped.map((s) => `${s.name} exited ${s.code} after ${s.exitMs} ms`).join(', ') +
        '\n',
    );
  });

  it('gateway, memory and approvals exit 0 within their grace period on SIGTERM', async () => {
    const env = { SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS) };
    const services = await Promise.all([
      stack.start('gateway', env),
      stack.start('memory', env),
      stack.start('approvals', env),
    ]);
    const stopped = await Promise.all(services.map((s) => terminate(s)));
    for (const s of stopped) {
      expect([s.name, s.code, s.signal]).toEqual([s.name, 0, null]);
      expect(s.exitMs).toBeLessThan(SHUTDOWN_GRACE_MS + MARGIN_MS);
    }
    process.stdout.write(`graceful drain: ${stopped.map((s) => `${s.name} exited after ${s.exitMs} ms`).join(', ')}\n`);
  });
});
