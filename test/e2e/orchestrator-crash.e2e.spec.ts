import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

const TENANT = 'demo';

function assertHealthyHistory(events: ThreadEvent[], runId: string) {
  // Versions contiguous from 1: nothing lost, nothing written twice.
  expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  const ofRun = events.filter((e) => e.runId === runId);
  const count = (type: string) => ofRun.filter((e) => e.type === type).length;
  expect(count('run.started')).toBe(1);
  expect(count('run.completed')).toBe(1);
  expect(count('tool.requested')).toBe(2);
  expect(count('tool.completed')).toBe(2);
  // Each tool result recorded once, for distinct calls.
  const completedCalls = ofRun
    .filter((e) => e.type === 'tool.completed')
    .map((e) => (e.data as { callId: string }).callId);
  expect(new Set(completedCalls).size).toBe(2);
}

describe('the demo run survives the orchestrator being SIGKILLed', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('finishes after a kill while its tool calls are in flight', async () => {
    const orchestrator = await stack.start('orchestrator');
    const requestId = `kill-mid-run-${Date.now()}`;
    const runId = runIdFor(TENANT, requestId);
    const threadId = threadIdFor(TENANT, requestId);
    await stack.publishRequest(TENANT, {
      requestId,
      agent: 'demo',
      input: [{ role: 'user', content: 'What is the weather in Oslo and Rome?' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    // No tool executor yet: the run is parked with two tool calls in flight.
    await stack.waitFor(TENANT, threadId, (ev) => ev.filter((e) => e.type === 'tool.requested').length === 2);
    await orchestrator.kill('SIGKILL');
    // Results arrive while no orchestrator runs; they wait in the thread inbox stream.
    await stack.start('tool-executor');
    await stack.start('orchestrator');
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { output: expect.stringContaining('Oslo') } });
    assertHealthyHistory(events, runId);
  });

  it('finishes after a kill between a commit and its publish (the sweeper publishes what was left)', async () => {
    await stack.services.get('orchestrator')?.kill('SIGKILL');
    const doomed = await stack.start('orchestrator', { RATCHET_FAILPOINTS: 'orchestrator.after-commit@3' });
    const requestId = `kill-after-commit-${Date.now()}`;
    const runId = runIdFor(TENANT, requestId);
    const threadId = threadIdFor(TENANT, requestId);
    await stack.publishRequest(TENANT, {
      requestId,
      agent: 'demo',
      input: [{ role: 'user', content: 'What is the weather in Oslo and Rome?' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const exit = await doomed.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(doomed.logs).toContain('failpoint orchestrator.after-commit@3');
    await stack.start('orchestrator');
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    assertHealthyHistory(events, runId);
  });
});
