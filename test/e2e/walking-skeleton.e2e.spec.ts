import { runIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { TestStack } from './stack';

const KEY = 'rk_e2e_walking_skeleton_key';

/**
 * The whole path with real processes: HTTP → gateway → JetStream → orchestrator → model worker →
 * tool-executor → orchestrator → completion, every transition in the Postgres event log, and the
 * `ratchet demo` command printing the timeline.
 */
describe('walking skeleton: the demo run end to end', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator'),
      stack.start('tool-executor'),
      stack.start('gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: 'demo' }),
    ]);
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('`ratchet demo` starts a run through the gateway and prints its completed timeline', async () => {
    const gateway = stack.services.get('gateway');
    const cli = sourceCommand('apps/cli/src/main.ts');
    const result = await runProcess(
      cli.command,
      [...cli.args, 'demo', '--gateway', `http://127.0.0.1:${gateway?.port}`, '--api-key', KEY],
      {
        ...cli.env,
        ...stack.env,
      },
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    for (const type of [
      'run.started',
      'model.requested',
      'model.responded',
      'tool.requested',
      'tool.completed',
      'run.completed',
    ]) {
      expect(result.stdout).toContain(type);
    }
    expect(result.stdout).toMatch(/Oslo/);
  });

  it('records every transition in the event log, and answers the same Idempotency-Key with the same run', async () => {
    const gateway = stack.services.get('gateway');
    const post = () =>
      fetch(`http://127.0.0.1:${gateway?.port}/v1/runs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'idempotency-key': 'e2e-same-key',
        },
        body: JSON.stringify({ agent: 'demo', input: 'What is the weather in Paris?' }),
      });
    const first = await post();
    expect(first.status).toBe(202);
    const body = (await first.json()) as { runId: string; threadId: string };
    expect(body.runId).toBe(runIdFor('demo', 'e2e-same-key'));
    const again = (await (await post()).json()) as { runId: string };
    expect(again.runId).toBe(body.runId);

    const events = await stack.waitFor('demo', body.threadId, (ev) => ev.some((e) => e.type === 'run.completed'));
    expect(events.map((e) => e.type)).toEqual([
      'thread.created',
      'run.requested',
      'run.started',
      'model.requested',
      'model.responded',
      'tool.requested',
      'tool.completed',
      'model.requested',
      'model.responded',
      'run.completed',
    ]);
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
    // A resent request started nothing new: one run on the thread.
    expect(new Set(events.map((e) => e.runId).filter(Boolean))).toEqual(new Set([body.runId]));
  });
});
