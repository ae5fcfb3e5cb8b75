import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

/*
 * The tenant's bound on runs in flight is exact (ADR 0045): requests decided at the same moment — in one
 * group commit, or on two orchestrators — no longer all see the same count. Fifteen requests published
 * back to back against a bound of ten: exactly ten start, five are refused (retryable).
 */

const AGENTS = path.resolve(__dirname, '../agents/loop');
const BOUND = 10;
const BURST = 15;

describe(`a burst of ${BURST} run requests against a bound of ${BOUND} runs in flight, two orchestrators`, () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    const env = { AGENTS_DIR: AGENTS, TENANT_MAX_ACTIVE_RUNS: String(BOUND) };
    await Promise.all([
      stack.start('orchestrator', env, 'orchestrator-a'),
      stack.start('orchestrator', env, 'orchestrator-b'),
      stack.start('tool-executor'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('starts exactly the bound and refuses the rest, retryable; the started ones complete', async () => {
    const ids = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
    const js = stack.nc.jetstream();
    // Back to back: every request is on the stream before the first is decided.
    await Promise.all(
      ids.map((id) =>
        js.publish(
          `${stack.prefix.subject}.requests.busy`,
          JSON.stringify({
            requestId: id,
            agent: 'slow',
            input: [{ role: 'user', content: 'hello' }],
            principal: { id: 'alice', roles: ['runner'] },
          }),
          { msgID: `busy:${id}` },
        ),
      ),
    );
    const decided = await Promise.all(
      ids.map((id) =>
        stack.waitFor('busy', threadIdFor('busy', id), (events) =>
          events.some((e) => e.type === 'run.started' || e.type === 'run.rejected'),
        ),
      ),
    );
    const started = decided.filter((events) => events.some((e) => e.type === 'run.started'));
    const refused = decided.filter((events) => events.some((e) => e.type === 'run.rejected'));
    expect([started.length, refused.length]).toEqual([BOUND, BURST - BOUND]);
    for (const events of refused)
      expect(events.find((e) => e.type === 'run.rejected')?.data).toMatchObject({
        error: { code: 'tenant.runs_limit', retryable: true },
      });
    const ends = await Promise.all(
      started.map((events) => {
        const requestId = (events.find((e) => e.type === 'run.requested')!.data as { requestId: string }).requestId;
        return stack.waitFor('busy', threadIdFor('busy', requestId), terminal(runIdFor('busy', requestId)), 60_000);
      }),
    );
    for (const events of ends) expect(events.at(-1)?.type).toBe('run.completed');
  });
});
