import type { ThreadEvent } from '@ratchet/contracts';
import { openServiceDatabase, type Database } from '@ratchet/adapters';
import { runIdFor } from '@ratchet/platform';
import { ledgerEffects, weatherRunRequest } from '@ratchet/testing';
import { TestStack } from './stack';

/**
 * Scale-out needs no coordination beyond JetStream's durable consumers and the event log's
 * optimistic-concurrency check: two replicas each of the orchestrator and the tool executor, 100 runs
 * published at once, and every run completes exactly once with no tool effect repeated.
 */
const TENANT = 'acme';
const RUNS = 100;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

const request = (i: number) => weatherRunRequest('scale', i);

describe('scale-out: two replicas of orchestrator and tool executor, 100 concurrent runs', () => {
  let stack: TestStack;
  let tools: Database;
  beforeAll(async () => {
    stack = await TestStack.create();
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
  });
  afterAll(async () => {
    await tools.close();
    await stack.stop();
  });

  it('every run completes once, one ledger row per tool call with attempts = 1, one tool.completed per call', async () => {
    await Promise.all([
      stack.start('orchestrator', {}, 'orchestrator-1'),
      stack.start('orchestrator', {}, 'orchestrator-2'),
      stack.start('tool-executor', {}, 'tools-1'),
      stack.start('tool-executor', {}, 'tools-2'),
    ]);
    const requests = Array.from({ length: RUNS }, (_, i) => request(i));
    await Promise.all(requests.map((r) => stack.publishRequest(TENANT, r)));

    const logs = new Map<string, ThreadEvent[]>();
    for (const r of requests) {
      const runId = runIdFor(TENANT, r.requestId);
      logs.set(
        r.threadId,
        await stack.waitFor(
          TENANT,
          r.threadId,
          (ev) => ev.some((e) => e.runId === runId && TERMINAL.has(e.type)),
          240_000,
        ),
      );
    }

    const requested: string[] = [];
    const completed: string[] = [];
    for (const r of requests) {
      const events = logs.get(r.threadId)!;
      const runId = runIdFor(TENANT, r.requestId);
      expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
      expect([r.requestId, events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)]).toEqual([
        r.requestId,
        ['run.completed'],
      ]);
      expect(events.filter((e) => e.type === 'run.started').map((e) => e.runId)).toEqual([runId]);
      const callIds = (type: string) =>
        events.filter((e) => e.type === type).map((e) => `${e.runId}/${(e.data as { callId: string }).callId}`);
      requested.push(...callIds('tool.requested'));
      completed.push(...callIds('tool.completed'));
    }
    // Two cities per run: two tool calls each, each completed exactly once.
    expect(requested).toHaveLength(2 * RUNS);
    expect(new Set(requested).size).toBe(requested.length);
    expect(completed.slice().sort()).toEqual(requested.slice().sort());

    const effects = await ledgerEffects(tools.sql, TENANT);
    expect(effects).toHaveLength(2 * RUNS);
    expect(new Set(effects.map((e) => e.key)).size).toBe(effects.length);
    expect(effects.map((e) => `${e.run_id}/${e.call_id}`).sort()).toEqual(requested.slice().sort());
    expect(effects.filter((e) => e.attempts !== 1 || e.state !== 'succeeded')).toEqual([]);
  });
});
