import path from 'node:path';
import { openServiceDatabase, threadEffects, type Database } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { EffectService } from '@ratchet/testing';
import { executorKilledAt } from './doomed-executor';
import { terminal, TestStack } from './stack';

/*
 * The reconcile branch of an uncertain effect, with a real SIGKILL: `demo.effect.payout` is at-most-once
 * (the outside world does not dedup it) and has a `reconcile` hook that asks the effect service whether
 * an effect under the call's key was applied. The tool executor is killed between the ledger's `started`
 * and the outcome — once after the payout reached the service (found: recorded as happened, its answer
 * read back as the result, never paid again) and once before it did (not found: run again, once). Five
 * runs per branch, all parked at the failpoint so one kill puts each exactly at that line.
 */

const TENANT = 'demo';
const RUNS = 5;

interface Run {
  requestId: string;
  runId: string;
  threadId: string;
  key?: string;
}

describe('reconcile after a crash mid-effect: found is recorded as happened, not found runs once', () => {
  let stack: TestStack;
  let tools: Database;
  const service = new EffectService();

  beforeAll(async () => {
    await service.start();
    stack = await TestStack.create();
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
    await stack.start('orchestrator', { AGENTS_DIR: path.resolve(__dirname, '../agents/effects') });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await tools?.close();
    await service.stop();
  });

  const executorEnv = () => ({ RATCHET_DEMO_EFFECT_URL: service.url });

  async function keysOf(runs: Run[]): Promise<void> {
    for (const r of runs) {
      const events = await stack.waitFor(TENANT, r.threadId, (ev) => ev.some((e) => e.type === 'tool.requested'));
      r.key = (events.find((e) => e.type === 'tool.requested')!.data as { idempotencyKey: string }).idempotencyKey;
    }
  }

  /** Starts RUNS runs with no executor, then an executor that dies at `point` with every call parked there. */
  async function crashAt(point: string, label: string): Promise<Run[]> {
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      const requestId = `reconcile-${label}-${i}`;
      runs.push({ requestId, runId: runIdFor(TENANT, requestId), threadId: threadIdFor(TENANT, requestId) });
      await stack.publishRequest(TENANT, {
        requestId,
        agent: 'effect-payout',
        input: [{ role: 'user', content: `item-${label}-${i}` }],
        principal: { id: 'alice', roles: ['runner'] },
      });
    }
    await keysOf(runs);
    await executorKilledAt(stack, executorEnv(), { label, point, gate: RUNS });
    return runs;
  }

  async function ledgerOf(run: Run) {
    const summary = await threadEffects(tools.sql, TENANT, run.threadId);
    expect(summary.effects).toHaveLength(1);
    return summary.effects[0]!;
  }

  const completed = async (run: Run): Promise<ThreadEvent[]> => {
    const events = await stack.waitFor(TENANT, run.threadId, terminal(run.runId), 90_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'effect.uncertain')).toHaveLength(0);
    return events;
  };

  it('found: killed after the payout reached the service, it is recorded as happened with the service’s answer, never paid twice', async () => {
    const runs = await crashAt('tools.after-effect', 'found');
    for (const r of runs) {
      expect(await ledgerOf(r)).toMatchObject({ state: 'started', attempts: 1 });
      expect(service.effects.get(r.key!)).toBe(1);
    }
    await stack.start('tool-executor', executorEnv(), 'executor-found');
    for (const r of runs) {
      const events = await completed(r);
      // The result is what the service says happened: its answer to the one payout, read back.
      expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({
        result: { effect: `${r.key}#1`, applied: { item: expect.stringMatching(/^item-found-/) } },
      });
      expect(service.calls.get(r.key!)).toBe(1);
      expect(service.effects.get(r.key!)).toBe(1);
      expect(service.lookups.get(r.key!)).toBe(1);
      expect(await ledgerOf(r)).toMatchObject({ state: 'succeeded', attempts: 1 });
    }
    await stack.services.get('executor-found')!.kill();
  }, 180_000);

  it('not found: killed after `started`, before the payout, it is paid once after the restart', async () => {
    const runs = await crashAt('tools.after-started', 'missing');
    for (const r of runs) {
      expect(await ledgerOf(r)).toMatchObject({ state: 'started', attempts: 1 });
      expect(service.calls.get(r.key!) ?? 0).toBe(0);
    }
    await stack.start('tool-executor', executorEnv(), 'executor-missing');
    for (const r of runs) {
      const events = await completed(r);
      expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({
        result: { effect: `${r.key}#1` },
      });
      expect(service.lookups.get(r.key!)).toBe(1);
      expect(service.calls.get(r.key!)).toBe(1);
      expect(service.effects.get(r.key!)).toBe(1);
      // The second attempt is on record: asked, not found, run again under the same key.
      expect(await ledgerOf(r)).toMatchObject({ state: 'succeeded', attempts: 2 });
    }
  }, 180_000);
});
