import path from 'node:path';
import { openServiceDatabase, threadEffects, type Database } from '@ratchet/adapters';
import type { ThreadEvent, ToolResolveCommand } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { EffectService } from '@ratchet/testing';
import { executorKilledAt } from './doomed-executor';
import { terminal, TestStack } from './stack';

/*
 * The effect-ledger crash matrix (issue #5): for each tool kind (pure, idempotent, at-most-once) the
 * executor is SIGKILLed (a) before it records `started` (a pure call records nothing before it acts),
 * (b) after the effect and before recording the outcome, (c) after committing outcome + result and
 * before publishing, (d) after publishing a result and before marking its row sent, (e) (idempotent,
 * slow) right after the `started` row written while the call acts (ADR 0043), then restarted
 * without the failpoint. 30 runs per cell. One kill serves a whole point: every run's call is in flight at once and
 * RATCHET_FAILPOINT_GATE parks them all at the failpoint before the first hit kills the process, so
 * each of the 90 calls is exactly at that line when the process dies (checked against the ledger and
 * the external service right after the kill).
 */

const TENANT = 'demo';
const RUNS_PER_CELL = 30;
const KINDS = [
  { kind: 'pure', agent: 'effect-read' },
  { kind: 'idempotent', agent: 'effect-upsert' },
  { kind: 'at-most-once', agent: 'effect-charge' },
] as const;
type Kind = (typeof KINDS)[number]['kind'];

interface Run {
  kind: Kind;
  requestId: string;
  runId: string;
  threadId: string;
  key?: string;
}

describe('effect ledger: SIGKILL of the tool executor never repeats an effect by accident', () => {
  let stack: TestStack;
  let tools: Database;
  const service = new EffectService();

  beforeAll(async () => {
    await service.start();
    stack = await TestStack.create();
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
    await stack.start('orchestrator', { AGENTS_DIR: path.resolve(__dirname, '../agents/effects') });
  });
  afterAll(async () => {
    await stack?.stop();
    await tools?.close();
    await service.stop();
  });

  const executorEnv = () => ({ RATCHET_DEMO_EFFECT_URL: service.url, TOOL_CONCURRENCY: '128' });

  async function toolRequestedKeys(runs: Run[]): Promise<void> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const rows = await stack.orchestratorDb.sql.query<{ thread_id: string; data: { idempotencyKey: string } }>(
        `select thread_id, data from ${stack.orchestratorDb.sql.table('thread_events')}
         where tenant_id = ? and type = 'tool.requested' and thread_id in (?)`,
        [TENANT, runs.map((r) => r.threadId)],
      );
      const byThread = new Map(rows.map((r) => [r.thread_id, r.data.idempotencyKey]));
      for (const r of runs) {
        const k = byThread.get(r.threadId);
        if (k) r.key = k;
      }
      if (byThread.size === runs.length) return;
      if (Date.now() > deadline) throw new Error(`only ${byThread.size}/${runs.length} calls requested`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async function waitAll(runs: Run[], done: (events: ThreadEvent[]) => boolean): Promise<Map<string, ThreadEvent[]>> {
    const out = new Map<string, ThreadEvent[]>();
    for (const r of runs) out.set(r.threadId, await stack.waitFor(TENANT, r.threadId, done, 120_000));
    return out;
  }

  async function ledgerOf(run: Run) {
    const summary = await threadEffects(tools.sql, TENANT, run.threadId);
    expect(summary.effects).toHaveLength(1);
    return summary.effects[0]!;
  }

  async function resolve(key: string, resolution: ToolResolveCommand['resolution'], by = 'operator-ann') {
    const command: ToolResolveCommand = {
      kind: 'tool.resolve',
      commandId: `resolve:${key}`,
      tenantId: TENANT,
      idempotencyKey: key,
      resolution,
      by,
    };
    await stack.nc
      .jetstream()
      .publish(`${stack.prefix.subject}.cmd.tool.${TENANT}`, JSON.stringify(command), { msgID: command.commandId });
  }

  const expectNoRepeats = (run: Run) => {
    const key = run.key!;
    if (run.kind === 'pure') {
      // A read: never an effect, however often it ran.
      expect(service.effects.get(key) ?? 0).toBe(0);
      expect(service.reads.get(key) ?? 0).toBeGreaterThanOrEqual(1);
    } else {
      // Idempotent: repeated calls carry the same key and the service applied it once.
      // At-most-once: executed exactly once, never twice.
      expect(service.effects.get(key) ?? 0).toBe(1);
    }
    if (run.kind === 'at-most-once') expect(service.calls.get(key) ?? 0).toBe(1);
  };

  function assertCompleted(events: ThreadEvent[], run: Run) {
    const ofRun = events.filter((e) => e.runId === run.runId);
    expect(ofRun.filter((e) => e.type === 'run.completed')).toHaveLength(1);
    expect(ofRun.filter((e) => e.type === 'tool.completed')).toHaveLength(1);
    expect(ofRun.filter((e) => e.type === 'tool.failed')).toHaveLength(0);
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
  }

  /** `point` is where the first hit kills; `park` (default `point`) is where the gate holds every call first. */
  /**
   * Stops a case's executor once its outbox is empty: a row it had not marked yet would be relayed by the
   * next case's doomed executor first, and kill it at that case's failpoint before any of its calls ran.
   */
  async function stopSettled(name: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    const unsent = async () =>
      Number(
        (
          await tools.sql.query<{ n: string }>(
            `select count(*) as n from ${tools.sql.table('outbox')} where sent_at is null`,
          )
        )[0]?.n,
      );
    while ((await unsent()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await unsent()).toBe(0);
    await stack.services.get(name)!.kill();
  }

  async function crashAt(point: string, label: string, park = point): Promise<Run[]> {
    const runs: Run[] = [];
    for (const { kind, agent } of KINDS) {
      for (let i = 0; i < RUNS_PER_CELL; i++) {
        const requestId = `${label}-${kind}-${i}`;
        runs.push({ kind, requestId, runId: runIdFor(TENANT, requestId), threadId: threadIdFor(TENANT, requestId) });
        await stack.publishRequest(TENANT, {
          requestId,
          agent,
          input: [{ role: 'user', content: `item-${label}-${i}` }],
          principal: { id: 'alice', roles: ['runner'] },
        });
      }
    }
    // No executor is running: every call waits in the command stream.
    await toolRequestedKeys(runs);
    await executorKilledAt(stack, executorEnv(), { label, point, park, gate: runs.length });
    return runs;
  }

  it('(a) killed before `started` is recorded: each call runs once after the restart', async () => {
    const runs = await crashAt('tools.before-started', 'a');
    // Exactly at the line: nothing in the ledger, nothing reached the outside world.
    for (const r of runs) {
      expect((await threadEffects(tools.sql, TENANT, r.threadId)).effects).toHaveLength(0);
      expect(service.calls.get(r.key!) ?? 0).toBe(0);
      expect(service.reads.get(r.key!) ?? 0).toBe(0);
    }
    await stack.start('tool-executor', executorEnv(), 'executor-a');
    const logs = await waitAll(runs, (ev) => terminal(runs.find((r) => r.threadId === ev[0]?.threadId)!.runId)(ev));
    for (const r of runs) {
      assertCompleted(logs.get(r.threadId)!, r);
      expectNoRepeats(r);
      if (r.kind !== 'pure') expect(service.calls.get(r.key!)).toBe(1);
      const e = await ledgerOf(r);
      expect(e).toMatchObject({ state: 'succeeded', attempts: 1 });
    }
    await stopSettled('executor-a');
  });

  it('(b) killed after the effect, before the outcome: pure/idempotent repeat with the same key; at-most-once escalates to a human', async () => {
    const runs = await crashAt('tools.after-effect', 'b');
    // Exactly at the line: the outside world acted once. The ledger says `started` for an at-most-once
    // call; a pure call records nothing before its outcome, nor does an idempotent call that ended before
    // its claim was due (TOOL_CLAIM_AFTER_MS, ADR 0043).
    for (const r of runs) {
      if (r.kind === 'pure') {
        expect((await threadEffects(tools.sql, TENANT, r.threadId)).effects).toHaveLength(0);
        expect(service.reads.get(r.key!)).toBe(1);
      } else if (r.kind === 'idempotent') {
        expect((await threadEffects(tools.sql, TENANT, r.threadId)).effects).toHaveLength(0);
        expect(service.effects.get(r.key!)).toBe(1);
      } else {
        expect(await ledgerOf(r)).toMatchObject({ state: 'started', attempts: 1 });
        expect(service.effects.get(r.key!)).toBe(1);
      }
    }
    await stack.start('tool-executor', executorEnv(), 'executor-b');
    const safe = runs.filter((r) => r.kind !== 'at-most-once');
    const once = runs.filter((r) => r.kind === 'at-most-once');
    const logs = await waitAll(safe, (ev) => ev.some((e) => e.type === 'run.completed'));
    for (const r of safe) {
      assertCompleted(logs.get(r.threadId)!, r);
      expectNoRepeats(r);
      // Executed again with the same key: the idempotent service saw a second call and deduplicated it.
      if (r.kind === 'idempotent') expect(service.calls.get(r.key!)).toBe(2);
      // The pure read ran again and its one outcome is the first record of the call; so is the idempotent
      // call's claim on its redelivery (one ledger row, one attempt recorded; assertCompleted: exactly one
      // result in the thread).
      if (r.kind === 'pure') expect(service.reads.get(r.key!)).toBe(2);
      expect(await ledgerOf(r)).toMatchObject({ state: 'succeeded', attempts: 1 });
    }
    // At-most-once: never a blind resend. The thread shows the escalation and waits for a human.
    await waitAll(once, (ev) => ev.some((e) => e.type === 'effect.uncertain'));
    for (const r of once) {
      const summary = await threadEffects(tools.sql, TENANT, r.threadId);
      expect(summary.awaitingHuman).toEqual([r.key]);
      expect(summary.byState.uncertain).toBe(1);
      expect(service.calls.get(r.key!)).toBe(1);
    }
    // The human checks the outside world (the charge is there) and says so.
    for (const r of once) {
      await resolve(r.key!, { decision: 'happened', result: { effect: `${r.key}#1`, confirmedBy: 'operator-ann' } });
    }
    const done = await waitAll(once, (ev) => ev.some((e) => e.type === 'run.completed'));
    for (const r of once) {
      const events = done.get(r.threadId)!;
      assertCompleted(events, r);
      expect(events.filter((e) => e.type === 'effect.uncertain')).toHaveLength(1);
      expectNoRepeats(r);
      expect(await ledgerOf(r)).toMatchObject({
        state: 'succeeded',
        resolution: 'happened',
        resolvedBy: 'operator-ann',
        attempts: 1,
      });
    }
    // A late or repeated answer changes nothing.
    await resolve(once[0]!.key!, { decision: 'retry' }, 'operator-bob');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await ledgerOf(once[0]!)).toMatchObject({ state: 'succeeded', resolvedBy: 'operator-ann' });
    expect(service.calls.get(once[0]!.key!)).toBe(1);
    await stopSettled('executor-b');
  });

  it('(c) killed after outcome + result are committed, before publishing: the stored result is sent, nothing runs again', async () => {
    const runs = await crashAt('tools.after-outcome', 'c');
    for (const r of runs) {
      expect(await ledgerOf(r)).toMatchObject({ state: 'succeeded', attempts: 1 });
      expect((await stack.events(TENANT, r.threadId)).some((e) => e.type === 'tool.completed')).toBe(false);
    }
    await stack.start('tool-executor', executorEnv(), 'executor-c');
    const logs = await waitAll(runs, (ev) => ev.some((e) => e.type === 'run.completed'));
    for (const r of runs) {
      assertCompleted(logs.get(r.threadId)!, r);
      expectNoRepeats(r);
      if (r.kind === 'pure') expect(service.reads.get(r.key!)).toBe(1);
      else expect(service.calls.get(r.key!)).toBe(1);
    }
    // The unacked commands come back (after the ack wait; the sweeper may have published the stored
    // result first) and are answered from the ledger: a dedup hit each, visible per thread.
    const deadline = Date.now() + 60_000;
    let hits: number[] = [];
    do {
      hits = await Promise.all(runs.map(async (r) => (await threadEffects(tools.sql, TENANT, r.threadId)).dedupHits));
      if (hits.every((h) => h >= 1)) break;
      await new Promise((r) => setTimeout(r, 250));
    } while (Date.now() < deadline);
    expect(hits.filter((h) => h < 1)).toEqual([]);
    for (const r of runs) expectNoRepeats(r);
    await stopSettled('executor-c');
  });

  it('(d) killed after publishing a result, before marking it sent: the results are sent again and absorbed, nothing runs again', async () => {
    // Every call parked after its outcome and result committed, then released: the first result out on
    // the bus kills the process before its row (or any other) is marked sent.
    const runs = await crashAt('outbox.after-publish.tool.result', 'd', 'tools.after-outcome');
    const unsent = await tools.sql.query<{ n: string }>(
      `select count(*) as n from ${tools.sql.table('outbox')} where sent_at is null and payload->>'threadId' in (?)`,
      [runs.map((r) => r.threadId)],
    );
    expect(Number(unsent[0]?.n)).toBe(runs.length);
    for (const r of runs) expect(await ledgerOf(r)).toMatchObject({ state: 'succeeded', attempts: 1 });
    await stack.start('tool-executor', executorEnv(), 'executor-d');
    const logs = await waitAll(runs, (ev) => ev.some((e) => e.type === 'run.completed'));
    for (const r of runs) {
      // One result in the thread although one of them was published twice (and the rest re-sent by the
      // sweeper or answered again from the ledger when their commands came back).
      assertCompleted(logs.get(r.threadId)!, r);
      expectNoRepeats(r);
      if (r.kind === 'pure') expect(service.reads.get(r.key!)).toBe(1);
      else expect(service.calls.get(r.key!)).toBe(1);
      expect(await ledgerOf(r)).toMatchObject({ state: 'succeeded', attempts: 1 });
    }
    // Nothing is left to send: the restarted executor marked every row it published.
    const deadline = Date.now() + 60_000;
    let left = runs.length;
    while (left > 0 && Date.now() < deadline) {
      const rows = await tools.sql.query<{ n: string }>(
        `select count(*) as n from ${tools.sql.table('outbox')} where sent_at is null and payload->>'threadId' in (?)`,
        [runs.map((r) => r.threadId)],
      );
      left = Number(rows[0]?.n);
      if (left > 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(left).toBe(0);
    await stopSettled('executor-d');
  });

  it('(e) an idempotent call still acting when its deferred claim is written, killed right after that claim: retried with the same key once the lease ran out', async () => {
    // Slow effects (the service answers 3 s after the request, and applies it at once): each call is
    // still acting when its `started` row is due (TOOL_CLAIM_AFTER_MS, 1 s here); the gate parks every
    // claim right after its commit, then the process dies.
    const runs: Run[] = [];
    for (let i = 0; i < 10; i++) {
      const requestId = `e-idempotent-${i}`;
      runs.push({
        kind: 'idempotent',
        requestId,
        runId: runIdFor(TENANT, requestId),
        threadId: threadIdFor(TENANT, requestId),
      });
      await stack.publishRequest(TENANT, {
        requestId,
        agent: 'effect-upsert',
        input: [{ role: 'user', content: `wait3000-e-${i}` }],
        principal: { id: 'alice', roles: ['runner'] },
      });
    }
    await toolRequestedKeys(runs);
    await executorKilledAt(stack, executorEnv(), {
      label: 'e',
      point: 'tools.after-deferred-claim',
      gate: runs.length,
    });
    for (const r of runs) {
      // The claim is there, held by the dead executor; the outside world applied the effect once.
      expect(await ledgerOf(r)).toMatchObject({ state: 'started', attempts: 1, leasedBy: 'doomed-e' });
      expect(service.effects.get(r.key!)).toBe(1);
    }
    await stack.start('tool-executor', executorEnv(), 'executor-e');
    const logs = await waitAll(runs, (ev) => ev.some((e) => e.type === 'run.completed'));
    for (const r of runs) {
      assertCompleted(logs.get(r.threadId)!, r);
      expectNoRepeats(r);
      // Run again with the same key once the dead holder's lease ran out: the service deduplicated it.
      expect(service.calls.get(r.key!)).toBe(2);
      expect(await ledgerOf(r)).toMatchObject({ state: 'succeeded', attempts: 2 });
    }
    await stopSettled('executor-e');
  });
});
