import path from 'node:path';
import type { ThreadEvent } from '@ratchet/contracts';
import { listRuns } from '@ratchet/adapters';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * A throttle (docs/flow-control.md#throttle): at most 3 runs per user start in any 4 s. One user asks for
 * 10 runs back to back (two of them on one thread, one behind the other), another user for 3. Two
 * orchestrators; one is SIGKILLed while most of the first user's runs are held. Every run completes; in the
 * log, no 4 s window holds more than 3 starts of one user, and the other user's runs are not held back by
 * the first's.
 */

const AGENTS = path.resolve(__dirname, '../agents/throttle');
const TENANT = 'throttle';
const ENV = { AGENTS_DIR: AGENTS, ADMISSION_PASS_MS: '100' };
const PERIOD_MS = 4000;
const LIMIT = 3;

const ask = (
  stack: TestStack,
  requestId: string,
  metadata: Record<string, string>,
  extra: Record<string, unknown> = {},
) =>
  stack.publishRequest(TENANT, {
    requestId,
    agent: 'throttled',
    input: [{ role: 'user', content: 'hello' }],
    principal: { id: 'alice', roles: ['runner'] },
    metadata,
    ...extra,
  });

const cli = sourceCommand('apps/cli/src/main.ts');

const startOf = (events: ThreadEvent[], runId: string) =>
  Date.parse(events.find((e) => e.type === 'run.started' && e.runId === runId)!.at);

describe('a throttle bounds the starts in every window, through a SIGKILL', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', ENV, 'orchestrator-a'),
      stack.start('orchestrator', ENV, 'orchestrator-b'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('starts at most its limit per key in any period, holds the rest named, and starts every run in the end', async () => {
    const first = Array.from({ length: 8 }, (_, i) => `u1-${i}`);
    const second = ['u2-0', 'u2-1', 'u2-2'];
    const shared = threadIdFor(TENANT, 'u1-shared');
    const runs: { id: string; thread: string }[] = [
      ...first.map((id) => ({ id, thread: threadIdFor(TENANT, id) })),
      { id: 'u1-s1', thread: shared },
      { id: 'u1-s2', thread: shared },
      ...second.map((id) => ({ id, thread: threadIdFor(TENANT, id) })),
    ];
    for (const id of first) await ask(stack, id, { userId: '1' });
    for (const id of ['u1-s1', 'u1-s2'])
      await ask(stack, id, { userId: '1' }, { threadId: shared, concurrency: 'enqueue' });
    for (const id of second) await ask(stack, id, { userId: '2' });

    // Every request is decided (started, or held) before an orchestrator dies; held runs name the throttle.
    const decided = await Promise.all(
      runs.map((r) =>
        stack.waitFor(TENANT, r.thread, (es) =>
          es.some((e) => e.runId === runIdFor(TENANT, r.id) && (e.type === 'run.queued' || e.type === 'run.started')),
        ),
      ),
    );
    const held = decided.flatMap((es) =>
      es.filter((e): e is Extract<ThreadEvent, { type: 'run.queued' }> => e.type === 'run.queued'),
    );
    expect(held.length).toBeGreaterThan(0);
    for (const e of held)
      expect(e.data.waitingFor).toEqual({
        bound: 'throttle',
        key: 'throttled:userId=1',
        limit: LIMIT,
        periodSeconds: 4,
      });
    await stack.services.get('orchestrator-a')?.kill('SIGKILL');

    const ends = new Map<string, ThreadEvent[]>();
    for (const r of runs)
      ends.set(r.id, await stack.waitFor(TENANT, r.thread, terminal(runIdFor(TENANT, r.id)), 120_000));
    for (const r of runs) {
      const runId = runIdFor(TENANT, r.id);
      const end = ends
        .get(r.id)!
        .find((e) => e.runId === runId && ['run.completed', 'run.failed', 'run.cancelled'].includes(e.type));
      expect({ id: r.id, end: end?.type }).toEqual({ id: r.id, end: 'run.completed' });
    }
    const starts = (ids: string[]) =>
      ids.map((id) => startOf(ends.get(id)!, runIdFor(TENANT, id))).sort((a, b) => a - b);
    const user1 = starts([...first, 'u1-s1', 'u1-s2']);
    // In any window of the period at most LIMIT starts: the (i + LIMIT)-th start is a period or more after the i-th.
    const gaps = user1.slice(LIMIT).map((at, i) => at - user1[i]!);
    expect(gaps.filter((gap) => gap < PERIOD_MS)).toEqual([]);
    // The other user's runs were never held: another key's starts leave theirs alone.
    for (const id of second)
      expect(
        ends
          .get(id)!
          .filter((e) => e.type === 'run.queued')
          .map((e) => e.runId),
      ).toEqual([]);
    // Each run's row keeps its throttle key after it ended (its start still counts in the window).
    const [row] = await listRuns(stack.orchestratorDb.sql, TENANT, threadIdFor(TENANT, 'u1-0'));
    expect(row).toMatchObject({ status: 'completed', throttleKey: 'throttled:userId=1' });
  });

  it("refuses a request whose metadata lacks the throttle's key, naming it", async () => {
    const replyTo = `${stack.prefix.subject}.test.throttle.${Date.now()}`;
    const outcome = stack.nc.subscribe(replyTo, { max: 1 });
    await ask(stack, 'keyless', {}, { replyTo });
    for await (const m of outcome)
      expect(m.json()).toMatchObject({
        status: 'rejected',
        error: {
          code: 'request.throttle_key_missing',
          message: expect.stringContaining('throttles its runs per metadata.userId'),
        },
      });
  });

  it("gives one tenant's runs of an agent without a throttle their own, set by an operator; other tenants keep none", async () => {
    const own = 'throttle-own';
    const settings = (...args: string[]) =>
      runProcess(cli.command, [...cli.args, 'agents', 'settings', ...args], { ...cli.env, ...stack.env });
    // On an agent that declares none, a limit alone is refused, naming what is missing.
    const half = await settings('set', 'plain', '--tenant', own, '--throttle-limit', '1');
    expect(half).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("give the tenant's both --throttle-limit and --throttle-period"),
    });
    expect(
      await settings('set', 'plain', '--tenant', own, '--throttle-limit', '1', '--throttle-period', '600'),
    ).toMatchObject({
      code: 0,
    });
    const listed = await settings('list', '--tenant', own);
    expect(listed.stdout).toContain('1 starts/600s');

    const request = (tenant: string, id: string) =>
      stack.publishRequest(tenant, {
        requestId: id,
        agent: 'plain',
        input: [{ role: 'user', content: 'hello' }],
        principal: { id: 'alice', roles: ['runner'] },
      });
    await request(own, 'p1');
    await stack.waitFor(own, threadIdFor(own, 'p1'), terminal(runIdFor(own, 'p1')));
    await request(own, 'p2');
    const held = await stack.waitFor(own, threadIdFor(own, 'p2'), (es) => es.some((e) => e.type === 'run.queued'));
    expect(held.find((e) => e.type === 'run.queued')!.data).toMatchObject({
      waitingFor: { bound: 'throttle', key: 'plain', limit: 1, periodSeconds: 600 },
    });
    // Another tenant's runs of the same agent are not throttled.
    for (const id of ['o1', 'o2']) await request(TENANT, id);
    for (const id of ['o1', 'o2']) {
      const events = await stack.waitFor(TENANT, threadIdFor(TENANT, id), terminal(runIdFor(TENANT, id)));
      expect(events.map((e) => e.type)).not.toContain('run.queued');
      expect(events.find((e) => e.type === 'run.requested')!.data).not.toHaveProperty('throttle');
    }
    // Unset, the tenant's next runs start free; the held run keeps the throttle it was requested with.
    expect(await settings('unset', 'plain', '--tenant', own, '--throttle')).toMatchObject({ code: 0 });
    await request(own, 'p3');
    const free = await stack.waitFor(own, threadIdFor(own, 'p3'), terminal(runIdFor(own, 'p3')));
    expect(free.at(-1)?.type).toBe('run.completed');
    const [still] = await listRuns(stack.orchestratorDb.sql, own, threadIdFor(own, 'p2'));
    expect(still).toMatchObject({ status: 'queued', throttleKey: 'plain' });
  });
});
