import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

const TENANT = 'acme';
const STEPS = 10;
const principal = { id: 'alice', roles: ['runner'] };
const go = (requestId: string) => ({
  requestId,
  agent: 'bench',
  input: [{ role: 'user' as const, content: 'go' }],
  principal,
});

/** Per step: the tool.requested and tool.completed events of its one `bench.noop` call. */
const toolEventsByStep = (events: ThreadEvent[]): Record<number, string[]> => {
  const out: Record<number, string[]> = {};
  for (const e of events) {
    if (e.type !== 'tool.requested' && e.type !== 'tool.completed') continue;
    const step = (e.data as { step: number }).step;
    (out[step] ??= []).push(e.type);
  }
  return out;
};
const oneCallPerStep = Object.fromEntries(
  Array.from({ length: STEPS }, (_, i) => [i + 1, ['tool.requested', 'tool.completed']]),
);

/**
 * `local` tools run in the orchestrator, inside the decision that calls them (ADR 0010): the call and
 * its result are committed by the same transaction, or neither is.
 */
describe('local tools run inside the decision that calls them', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator'), stack.start('tool-executor')]);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Tool-call commands the executor has been handed (the `tool-executor` consumer's sequence). */
  const toolCommandsOnBus = () => stack.deliveredTo(`${stack.prefix.subject}.cmd.tool.${TENANT}`, 'tool-executor');

  it('never sends a local call to the executor; each call and its result are written by one commit', async () => {
    const before = await toolCommandsOnBus();
    await stack.publishRequest(TENANT, go('local-tools-1'));
    const thread = threadIdFor(TENANT, 'local-tools-1');
    const events = await stack.waitFor(TENANT, thread, terminal(runIdFor(TENANT, 'local-tools-1')));
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(toolEventsByStep(events)).toEqual(oneCallPerStep);
    // Written by one decision: the result's events follow the call's with no event between them.
    events.forEach((e, i) => {
      if (e.type === 'tool.requested') expect(events[i + 1]?.type).toBe('tool.completed');
    });
    expect(await toolCommandsOnBus()).toBe(before);
  });

  it('SIGKILL after a local tool ran, before its commit: nothing of it was recorded; it runs again, recorded once', async () => {
    await stack.outboxSettled();
    await stack.services.get('orchestrator')?.kill('SIGKILL');
    // The third local call this process makes: step 3 of the run.
    const victim = await stack.start('orchestrator', { RATCHET_FAILPOINTS: 'orchestrator.local-tool.after-run@3' });
    await stack.publishRequest(TENANT, go('local-tools-kill'));
    expect((await victim.exited).signal).toBe('SIGKILL');
    const thread = threadIdFor(TENANT, 'local-tools-kill');
    const before = await stack.events(TENANT, thread);
    // Steps 1 and 2 are committed; of step 3 only the model's request, not its answer or the tool call.
    expect(toolEventsByStep(before)).toEqual({ 1: oneCallPerStep[1], 2: oneCallPerStep[2] });

    await stack.start('orchestrator');
    const events = await stack.waitFor(TENANT, thread, terminal(runIdFor(TENANT, 'local-tools-kill')), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(toolEventsByStep(events)).toEqual(oneCallPerStep);
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
    // Step 3's model call was made again (its command's lease ran out with the process), as attempt 2.
    const step3 = events
      .filter((e) => e.type === 'model.requested' && (e.data as { step: number }).step === 3)
      .map((e) => (e.data as { attempt: number }).attempt);
    expect(step3).toEqual([1, 2]);
  });
});
