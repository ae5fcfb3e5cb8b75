import path from 'node:path';
import { openServiceDatabase, threadEffects, type Database } from '@ratchet/adapters';
import type { ThreadEvent, ToolResolveCommand } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { EffectService, freePort, ServiceProcess } from '@ratchet/testing';
import { terminal, TestStack } from './stack';
import { catalogOf, ToolProcess } from './tool-processes';

/*
 * The effect-ledger crash matrix for tools that live elsewhere: a remote tool service (NATS) and an MCP
 * server (streamable HTTP), each with a pure, an idempotent and an at-most-once tool acting on an
 * in-test effect service that counts calls and effects per key (the far side). SIGKILL of the tool
 * executor before the call (`tools.before-started`), during it (the service holds the calls until the
 * executor is dead, then acts: the reply is lost), after its effect (`tools.after-effect`) and after
 * its outcome (`tools.after-outcome`); SIGKILL of the tool services before and after their effect.
 * Every cell parks all its calls at the line before the one kill. One effect per key; an outcome that
 * is unknown ends as an escalation a human resolves.
 */
const TENANT = 'demo';
const RUNS = 3;
const CASES = [
  { source: 'remote', kind: 'pure', agent: 'fx-read' },
  { source: 'remote', kind: 'idempotent', agent: 'fx-upsert' },
  { source: 'remote', kind: 'at-most-once', agent: 'fx-charge' },
  { source: 'mcp', kind: 'pure', agent: 'mfx-read' },
  { source: 'mcp', kind: 'idempotent', agent: 'mfx-upsert' },
  { source: 'mcp', kind: 'at-most-once', agent: 'mfx-charge' },
] as const;
const PER_SERVICE = RUNS * 3;

interface Run {
  source: 'remote' | 'mcp';
  kind: (typeof CASES)[number]['kind'];
  requestId: string;
  runId: string;
  threadId: string;
  key?: string;
}

describe('effect ledger: SIGKILL around remote and MCP tools never repeats an effect by accident', () => {
  let stack: TestStack;
  let tools: Database;
  const far = new EffectService();
  let mcpPort = 0;
  const services: { remote?: ToolProcess; mcp?: ToolProcess } = {};

  const serviceEnv = () => ({
    NATS_URL: stack.env['NATS_URL']!,
    RATCHET_SUBJECT_PREFIX: stack.prefix.subject,
    EFFECT_URL: far.url,
    MCP_PORT: String(mcpPort),
  });
  async function startServices(extra: Record<string, string> = {}): Promise<void> {
    services.remote = ToolProcess.ts('fx remote', 'test/fixtures/tool-services/effects.remote.ts', {
      ...serviceEnv(),
      ...extra,
    });
    services.mcp = ToolProcess.ts('fx mcp', 'test/fixtures/tool-services/effects.mcp.ts', {
      ...serviceEnv(),
      ...extra,
    });
    await Promise.all([services.remote.waitForLog('serving fx tools'), services.mcp.waitForLog('serving fx MCP')]);
  }
  async function stopServices(): Promise<void> {
    await Promise.all([services.remote?.kill(), services.mcp?.kill()]);
  }
  const executorEnv = () => ({
    TOOL_CONCURRENCY: '64',
    REMOTE_DISCOVERY_INTERVAL_MS: '500',
    MCP_SERVERS: JSON.stringify([{ name: 'mfx', url: `http://127.0.0.1:${mcpPort}/mcp`, timeoutMs: 3000 }]),
  });
  const allTools = (c: { tools: { name: string }[] }) =>
    ['fx.read', 'fx.upsert', 'fx.charge', 'mfx.read', 'mfx.upsert', 'mfx.charge'].every((n) =>
      c.tools.some((t) => t.name === n),
    );

  beforeAll(async () => {
    await far.start();
    mcpPort = await freePort();
    stack = await TestStack.create();
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
    await startServices();
    // The shared agents list the services' tools: the executor's catalog must know them when they register.
    const executor = await stack.start('tool-executor', executorEnv(), 'executor-0');
    await catalogOf(stack.nc, stack.prefix.subject, TENANT, allTools);
    await stack.start('orchestrator', { AGENTS_DIR: path.resolve(__dirname, '../agents/remote-effects') });
    await executor.kill();
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await stopServices();
    await tools?.close();
    await far.stop();
  });

  // A cell that failed half-way must not leave its executor running into the next cell.
  afterEach(async () => {
    await Promise.all(
      [...stack.services.entries()].filter(([name]) => name.startsWith('executor-')).map(([, svc]) => svc.kill()),
    );
  });

  async function publish(label: string): Promise<Run[]> {
    const runs: Run[] = [];
    for (const { source, kind, agent } of CASES) {
      for (let i = 0; i < RUNS; i++) {
        const requestId = `${label}-${agent}-${i}`;
        runs.push({
          source,
          kind,
          requestId,
          runId: runIdFor(TENANT, requestId),
          threadId: threadIdFor(TENANT, requestId),
        });
        await stack.publishRequest(TENANT, {
          requestId,
          agent,
          input: [{ role: 'user', content: `item-${label}-${i}` }],
          principal: { id: 'alice', roles: ['runner'] },
        });
      }
    }
    const deadline = Date.now() + 90_000;
    for (;;) {
      const rows = await stack.orchestratorDb.sql.query<{ thread_id: string; data: { idempotencyKey: string } }>(
        `select thread_id, data from ${stack.orchestratorDb.sql.table('thread_events')}
         where tenant_id = ? and type = 'tool.requested' and thread_id in (?)`,
        [TENANT, runs.map((r) => r.threadId)],
      );
      for (const row of rows) runs.find((r) => r.threadId === row.thread_id)!.key = row.data.idempotencyKey;
      if (rows.length === runs.length) return runs;
      if (Date.now() > deadline) throw new Error(`only ${rows.length}/${runs.length} calls requested`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const waitAll = async (runs: Run[], done: (events: ThreadEvent[], run: Run) => boolean) => {
    const out = new Map<string, ThreadEvent[]>();
    for (const r of runs) out.set(r.threadId, await stack.waitFor(TENANT, r.threadId, (ev) => done(ev, r), 120_000));
    return out;
  };
  const ended = (events: ThreadEvent[], run: Run) => terminal(run.runId)(events);
  const escalated = (events: ThreadEvent[]) => events.some((e) => e.type === 'effect.uncertain');
  const count = (m: Map<string, number>, run: Run) => m.get(run.key!) ?? 0;

  async function resolve(run: Run, resolution: ToolResolveCommand['resolution']): Promise<void> {
    const command: ToolResolveCommand = {
      kind: 'tool.resolve',
      commandId: `resolve:${run.key}`,
      tenantId: TENANT,
      idempotencyKey: run.key!,
      resolution,
      by: 'operator-ann',
    };
    await stack.nc
      .jetstream()
      .publish(`${stack.prefix.subject}.cmd.tool.${TENANT}`, JSON.stringify(command), { msgID: command.commandId });
  }

  function completedOnce(events: ThreadEvent[], run: Run): void {
    const ofRun = events.filter((e) => e.runId === run.runId);
    expect(ofRun.filter((e) => e.type === 'run.completed')).toHaveLength(1);
    expect(ofRun.filter((e) => e.type === 'tool.completed')).toHaveLength(1);
    expect(ofRun.filter((e) => e.type === 'tool.failed')).toHaveLength(0);
  }

  /** One effect per key, whatever happened: never two applied effects, never two at-most-once calls. */
  function oneEffectPerKey(run: Run): void {
    if (run.kind === 'pure') expect(count(far.effects, run)).toBe(0);
    else expect(count(far.effects, run)).toBeLessThanOrEqual(1);
    if (run.kind === 'at-most-once') expect(count(far.calls, run)).toBeLessThanOrEqual(1);
  }

  /** Kills a tool executor started with `env` once every call of the cell is parked where `env` says. */
  async function doomedExecutor(label: string, env: Record<string, string>): Promise<ServiceProcess> {
    return ServiceProcess.start(
      'tool-executor',
      { ...stack.env, ...executorEnv(), SERVICE_INSTANCE_ID: `doomed-${label}`, RATCHET_ACK_WAIT_MS: '10000', ...env },
      { waitReady: false },
    );
  }

  async function restartExecutor(label: string): Promise<ServiceProcess> {
    const executor = await stack.start('tool-executor', executorEnv(), `executor-${label}`);
    return executor;
  }

  /** After a kill mid-effect: pure and idempotent repeat with the same key; at-most-once waits for a human. */
  async function afterMidEffect(runs: Run[], label: string): Promise<void> {
    const executor = await restartExecutor(label);
    const safe = runs.filter((r) => r.kind !== 'at-most-once');
    const once = runs.filter((r) => r.kind === 'at-most-once');
    const done = await waitAll(safe, ended);
    for (const r of safe) {
      completedOnce(done.get(r.threadId)!, r);
      oneEffectPerKey(r);
      // Run again with the same key (a pure or idempotent call may repeat: more than once when a slow
      // machine redelivers it meanwhile); the idempotent effect is applied once all the same.
      if (r.kind === 'idempotent') {
        expect(count(far.effects, r)).toBe(1);
        expect(count(far.calls, r)).toBeGreaterThanOrEqual(2);
      } else expect(count(far.reads, r)).toBeGreaterThanOrEqual(2);
    }
    await waitAll(once, escalated);
    for (const r of once) {
      expect((await threadEffects(tools.sql, TENANT, r.threadId)).awaitingHuman).toEqual([r.key]);
      expect(count(far.calls, r)).toBe(1);
      await resolve(r, { decision: 'happened', result: { confirmedBy: 'operator-ann' } });
    }
    for (const [threadId, events] of await waitAll(once, ended)) {
      const r = once.find((o) => o.threadId === threadId)!;
      completedOnce(events, r);
      expect(count(far.calls, r)).toBe(1);
    }
    await executor.kill();
  }

  it('executor killed before the call: each runs once after the restart', async () => {
    const doomed = await doomedExecutor('a', {
      RATCHET_FAILPOINTS: 'tools.before-started@1',
      RATCHET_FAILPOINT_GATE: `${CASES.length * RUNS}:60000`,
    });
    const runs = await publish('a');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    for (const r of runs) expect(count(far.calls, r) + count(far.reads, r)).toBe(0);
    const executor = await restartExecutor('a');
    for (const [threadId, events] of await waitAll(runs, ended)) {
      const r = runs.find((o) => o.threadId === threadId)!;
      completedOnce(events, r);
      oneEffectPerKey(r);
      if (r.kind === 'pure') expect(count(far.reads, r)).toBeGreaterThanOrEqual(1);
      else expect(count(far.effects, r)).toBe(1);
    }
    await executor.kill();
  }, 300_000);

  it('executor killed during the call (the services act after it died): no repeat; at-most-once escalates', async () => {
    await stopServices();
    await startServices({ FX_HOLD: 'before-effect', FX_GATE: String(PER_SERVICE) });
    const doomed = await doomedExecutor('b', {});
    await doomed.waitReady(60_000);
    const runs = await publish('b');
    await Promise.all([
      services.remote!.waitForLog(`held ${PER_SERVICE}/${PER_SERVICE}`),
      services.mcp!.waitForLog(`held ${PER_SERVICE}/${PER_SERVICE}`),
    ]);
    await doomed.kill();
    // The services act now, for an executor that is gone: their replies are lost.
    stack.nc.publish(`${stack.prefix.subject}.test.fx.release`, '');
    const deadline = Date.now() + 30_000;
    const acted = () => runs.every((r) => (r.kind === 'pure' ? count(far.reads, r) : count(far.calls, r)) === 1);
    while (!acted() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(acted()).toBe(true);
    for (const r of runs.filter((x) => x.kind !== 'pure')) {
      const { effects } = await threadEffects(tools.sql, TENANT, r.threadId);
      // At-most-once: claimed before it acted. Idempotent: claimed only if it had acted TOOL_CLAIM_AFTER_MS
      // when the executor died (ADR 0043); nothing recorded otherwise. Never an outcome.
      const states = effects.map((e) => e.state);
      if (r.kind === 'at-most-once') expect(states).toEqual(['started']);
      else expect([[], ['started']]).toContainEqual(states);
    }
    await stopServices();
    await startServices();
    await afterMidEffect(runs, 'b');
  }, 300_000);

  it('executor killed after the effect, before its outcome: pure/idempotent repeat with the same key; at-most-once escalates', async () => {
    const doomed = await doomedExecutor('c', {
      RATCHET_FAILPOINTS: 'tools.after-effect@1',
      RATCHET_FAILPOINT_GATE: `${CASES.length * RUNS}:60000`,
    });
    const runs = await publish('c');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    for (const r of runs) expect(r.kind === 'pure' ? count(far.reads, r) : count(far.effects, r)).toBe(1);
    await afterMidEffect(runs, 'c');
  }, 300_000);

  it('executor killed after committing the outcome: the stored result is sent, nothing runs again', async () => {
    const doomed = await doomedExecutor('d', {
      RATCHET_FAILPOINTS: 'tools.after-outcome@1',
      RATCHET_FAILPOINT_GATE: `${CASES.length * RUNS}:60000`,
    });
    const runs = await publish('d');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const executor = await restartExecutor('d');
    for (const [threadId, events] of await waitAll(runs, ended)) {
      const r = runs.find((o) => o.threadId === threadId)!;
      completedOnce(events, r);
      // The stored outcome is re-sent: a call with a ledger outcome never runs again.
      if (r.kind === 'pure') expect(count(far.reads, r)).toBeGreaterThanOrEqual(1);
      else expect(count(far.calls, r)).toBe(1);
    }
    await executor.kill();
  }, 300_000);

  for (const point of ['before-effect', 'after-effect'] as const) {
    it(`tool services killed ${point}: one effect per key, and a call whose outcome is unknown escalates`, async () => {
      await stopServices();
      await startServices({ FX_CRASH: point, FX_GATE: String(PER_SERVICE) });
      const crashed = { remote: services.remote!, mcp: services.mcp! };
      const executor = await restartExecutor(`s-${point}`);
      const runs = await publish(`s-${point}`);
      await Promise.all([crashed.remote.exited, crashed.mcp.exited]);
      expect(crashed.remote.logs).toContain(`FX_CRASH ${point}: SIGKILL`);
      expect(crashed.mcp.logs).toContain(`FX_CRASH ${point}: SIGKILL`);
      for (const r of runs) {
        const acted = r.kind === 'pure' ? count(far.reads, r) : count(far.calls, r);
        expect(acted).toBe(point === 'before-effect' ? 0 : 1);
      }
      await startServices();
      const once = runs.filter((r) => r.kind === 'at-most-once');
      // Every at-most-once call reached its service, which died with it: unknown, so a human decides.
      await waitAll(once, escalated);
      for (const r of once) {
        const events = await stack.events(TENANT, r.threadId);
        expect(events.filter((e) => e.type === 'tool.failed')).toHaveLength(0);
        // The human checks the far side: it happened (after-effect), or it did not (before-effect: run it once).
        await resolve(
          r,
          point === 'after-effect' ? { decision: 'happened', result: { checked: true } } : { decision: 'retry' },
        );
      }
      for (const [threadId, events] of await waitAll(runs, ended)) {
        const r = runs.find((o) => o.threadId === threadId)!;
        oneEffectPerKey(r);
        if (r.kind === 'at-most-once') {
          completedOnce(events, r);
          expect(count(far.calls, r)).toBe(1);
        } else {
          // Retried with the same key while the service came back: completed, or failed with a named code.
          const failed = events.filter(
            (e): e is Extract<ThreadEvent, { type: 'tool.failed' }> => e.type === 'tool.failed',
          );
          for (const f of failed) expect(f.data.error.code).toMatch(/^(remote|mcp)\./);
          if (r.kind === 'idempotent' && point === 'after-effect') expect(count(far.effects, r)).toBe(1);
        }
      }
      await executor.kill();
    }, 300_000);
  }
});
