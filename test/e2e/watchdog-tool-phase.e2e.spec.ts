import path from 'node:path';
import { threadIdFor, runIdFor } from '@ratchet/platform';
import { EffectService } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * A run whose tool result is lost — its effect ran once, the result never reached the thread — must not
 * stay stuck (the stall seen once in a chaos run: the approval granted, the effect done, the run never
 * ended, the run queued behind it never started). The watchdog looked only at runs waiting for a model
 * call: a run in its tool phase was never a candidate before its whole time budget ran out. Here the tool
 * result is taken off the INBOX stream before any orchestrator reads it; the watchdog nudges the run after
 * its step budget, the call is sent again, the effect ledger answers with the stored outcome (the effect
 * is not repeated) and the run completes, and so does the run queued behind it.
 */

const TENANT = 'demo';
const AGENTS = path.resolve(__dirname, '../agents/stall');
const WATCHDOG = { WATCHDOG_INTERVAL_MS: '300', WATCHDOG_MIN_IDLE_MS: '500' };

describe('the watchdog moves a run whose tool result was lost', () => {
  let stack: TestStack;
  const service = new EffectService();

  beforeAll(async () => {
    await service.start();
    stack = await TestStack.create();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await service.stop();
  });

  it('nudges it after its step budget; the stored outcome is sent again and the run and the one queued behind it complete', async () => {
    await stack.start('orchestrator', { AGENTS_DIR: AGENTS, ...WATCHDOG });
    const first = 'lost-result-1';
    const threadId = threadIdFor(TENANT, first);
    await stack.publishRequest(TENANT, {
      requestId: first,
      agent: 'lost-result',
      input: [{ role: 'user', content: 'item-1' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    await stack.waitFor(TENANT, threadId, (ev) => ev.some((e) => e.type === 'tool.requested'));
    // Queued behind it on the same thread.
    await stack.publishRequest(TENANT, {
      requestId: 'lost-result-2',
      threadId,
      agent: 'lost-result',
      input: [{ role: 'user', content: 'item-2' }],
      principal: { id: 'alice', roles: ['runner'] },
      concurrency: 'enqueue',
    });
    await stack.waitFor(TENANT, threadId, (ev) => ev.some((e) => e.type === 'run.queued'));
    // No orchestrator reads the inbox while the executor answers; then its answer is lost.
    await stack.services.get('orchestrator')!.kill('SIGKILL');
    const executor = await stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: service.url });
    const jsm = await stack.nc.jetstreamManager();
    const inbox = `${stack.prefix.subject}.inbox.${TENANT}.${threadId}`;
    const stream = await jsm.streams.find(inbox);
    const deadline = Date.now() + 30_000;
    while ((await jsm.streams.info(stream, { subjects_filter: inbox })).state.subjects?.[inbox] === undefined) {
      if (Date.now() > deadline) throw new Error(`no tool result on ${inbox}\n${executor.logs}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(service.effectsFor('')).toBe(1);
    await jsm.streams.purge(stream, { filter: inbox });

    await stack.start('orchestrator', { AGENTS_DIR: AGENTS, ...WATCHDOG });
    const events = await stack.waitFor(TENANT, threadId, terminal(runIdFor(TENANT, 'lost-result-2')), 60_000);
    const ofFirst = events.filter((e) => e.runId === runIdFor(TENANT, first));
    expect(ofFirst.find((e) => e.type === 'run.resumed')?.data).toMatchObject({
      reason: expect.stringMatching(/^watchdog: no progress for \d+ s \(step budget 2 s\)$/),
    });
    expect(ofFirst.filter((e) => e.type === 'tool.completed')).toHaveLength(1);
    expect(ofFirst.at(-1)?.type).toBe('run.completed');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', runId: runIdFor(TENANT, 'lost-result-2') });
    // The effect was not repeated: the ledger answered the second send with the stored outcome.
    expect(service.effectsFor('')).toBe(2); // one per run
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
  }, 120_000);
});
