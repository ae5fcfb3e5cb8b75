import path from 'node:path';
import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

/*
 * A queued TTL (docs/flow-control.md#queued-ttl): a run that has not started 3 s after its request fails as
 * `run.queue_expired`, whatever holds it — a concurrency key at its max (agent `patient`, one run per
 * customer) or its thread's earlier run (agent `steady`, no keys). The only orchestrator is SIGKILLed
 * before any deadline is up and another starts after every deadline passed: the endings come from what was
 * committed (the deadline in each queued run's row), not from a timer of the process that queued them.
 */

const AGENTS = path.resolve(__dirname, '../agents/queue-ttl');
const TENANT = 'ttl';
const ENV = { AGENTS_DIR: AGENTS, ADMISSION_PASS_MS: '200', WATCHDOG_INTERVAL_MS: '500', WATCHDOG_MIN_IDLE_MS: '1000' };

const ask = (stack: TestStack, requestId: string, agent: string, extra: Record<string, unknown> = {}) =>
  stack.publishRequest(TENANT, {
    requestId,
    agent,
    input: [{ role: 'user', content: 'hello' }],
    principal: { id: 'alice', roles: ['runner'] },
    ...extra,
  });

const ending = (events: ThreadEvent[], runId: string) =>
  events.find((e) => e.runId === runId && (e.type === 'run.completed' || e.type === 'run.failed'));

describe('a queued TTL ends runs that did not start in time, after a SIGKILL too', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await stack.start('orchestrator', ENV, 'orchestrator-a');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('names the ending and what the run waited for; runs that started in time complete', async () => {
    // Customer alpha: k1 starts, k2 and k3 are held by the key. A thread of `steady`: s1 runs, s2 waits behind it.
    await ask(stack, 'k1', 'patient', { metadata: { customerId: 'alpha' } });
    const t = (id: string) => threadIdFor(TENANT, id);
    await stack.waitFor(TENANT, t('k1'), (es) => es.some((e) => e.type === 'run.started'));
    await ask(stack, 'k2', 'patient', { metadata: { customerId: 'alpha' } });
    await ask(stack, 'k3', 'patient', { metadata: { customerId: 'alpha' } });
    await ask(stack, 's1', 'steady');
    await stack.waitFor(TENANT, t('s1'), (es) => es.some((e) => e.type === 'run.started'));
    await ask(stack, 's2', 'steady', { threadId: t('s1'), concurrency: 'enqueue' });
    for (const [id, thread] of [
      ['k2', t('k2')],
      ['k3', t('k3')],
      ['s2', t('s1')],
    ] as const)
      await stack.waitFor(TENANT, thread, (es) =>
        es.some((e) => e.type === 'run.queued' && e.runId === runIdFor(TENANT, id)),
      );

    // The only orchestrator dies before any deadline is up; another starts after all of them passed.
    await stack.services.get('orchestrator-a')?.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 3_500));
    await stack.start('orchestrator', ENV, 'orchestrator-b');

    const [k1, k2, k3, s] = await Promise.all([
      stack.waitFor(TENANT, t('k1'), terminal(runIdFor(TENANT, 'k1')), 90_000),
      stack.waitFor(TENANT, t('k2'), terminal(runIdFor(TENANT, 'k2')), 90_000),
      stack.waitFor(TENANT, t('k3'), terminal(runIdFor(TENANT, 'k3')), 90_000),
      stack.waitFor(
        TENANT,
        t('s1'),
        (es) => [runIdFor(TENANT, 's1'), runIdFor(TENANT, 's2')].every((id) => ending(es, id) !== undefined),
        90_000,
      ),
    ]);

    // The runs that started in time go on to complete.
    expect(ending(k1, runIdFor(TENANT, 'k1'))?.type).toBe('run.completed');
    expect(ending(s, runIdFor(TENANT, 's1'))?.type).toBe('run.completed');
    // The others end, named, saying what held them; none of them ever started.
    for (const [events, id] of [
      [k2, 'k2'],
      [k3, 'k3'],
    ] as const) {
      expect(ending(events, runIdFor(TENANT, id))?.data).toEqual({
        error: {
          code: 'run.queue_expired',
          message: `run ${runIdFor(TENANT, id)} did not start within 3 s of its request (its agent's queueTtlSeconds): it waited for concurrency key customer=alpha at its max of 1 runs in flight`,
          retryable: true,
        },
      });
      expect(events.some((e) => e.type === 'run.started' && e.runId === runIdFor(TENANT, id))).toBe(false);
    }
    expect(ending(s, runIdFor(TENANT, 's2'))?.data).toMatchObject({
      error: { code: 'run.queue_expired', message: expect.stringContaining("it waited for the thread's earlier runs") },
    });
    expect(s.some((e) => e.type === 'run.started' && e.runId === runIdFor(TENANT, 's2'))).toBe(false);

    // The runs rows say the same: failed, nothing left queued.
    const rows = await stack.orchestratorDb.sql.query<{ request_id: string; status: string }>(
      `select request_id, status from ${stack.orchestratorDb.sql.table('runs')} where tenant_id = ? order by request_id`,
      [TENANT],
    );
    expect(rows).toEqual([
      { request_id: 'k1', status: 'completed' },
      { request_id: 'k2', status: 'failed' },
      { request_id: 'k3', status: 'failed' },
      { request_id: 's1', status: 'completed' },
      { request_id: 's2', status: 'failed' },
    ]);
  });
});
