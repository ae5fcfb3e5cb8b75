import path from 'node:path';
import type { ApprovalsReply, WaitpointCompletionRequestInput } from '@ratchet/contracts';
import { openServiceDatabase, type Database } from '@ratchet/adapters';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

/*
 * A thousand runs waiting on waitpoints (ADR 0041), with a bound of 50 runs in flight: waiting runs leave
 * that bound, so another run still starts and completes; then every waitpoint is completed in one burst
 * over NATS (`<prefix>.waitpoints.<tenant>.complete`, as another service of the tenant would) and every
 * run completes, each once.
 */

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/waitpoints');
const RUNS = 1000;
const BATCH = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('waitpoints: a thousand waiting runs, completed in one burst over NATS', () => {
  let stack: TestStack;
  let approvalsDb: Database;
  beforeAll(async () => {
    stack = await TestStack.create();
    approvalsDb = await openServiceDatabase(stack.testDb.url, 'approvals');
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS, TENANT_MAX_ACTIVE_RUNS: String(BATCH) }),
      stack.start('tool-executor'),
      stack.start('approvals'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
    await approvalsDb?.close();
  });

  const count = async (db: Database, sql: string, params: unknown[] = []) =>
    (await db.sql.query<{ n: number }>(sql, params))[0]?.n ?? 0;
  const pendingWaitpoints = () =>
    count(
      approvalsDb,
      `select count(*)::int as n from ${approvalsDb.sql.table('approvals')}
        where tenant_id = ? and kind = 'waitpoint' and status = 'pending'`,
      [TENANT],
    );
  const runsWith = (status: string) =>
    count(
      stack.orchestratorDb,
      `select count(*)::int as n from ${stack.orchestratorDb.sql.table('runs')} where tenant_id = ? and status = ?`,
      [TENANT, status],
    );
  const until = async (what: string, check: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(200);
    }
  };

  it('waiting runs leave the bound on runs in flight; one burst of completions completes every run once', async () => {
    // Started a bound's worth at a time: each batch reaches its waits before the next is sent.
    for (let b = 0; b < RUNS / BATCH; b++) {
      await Promise.all(
        Array.from({ length: BATCH }, (_, i) =>
          stack.publishRequest(TENANT, {
            requestId: `job-${b * BATCH + i}`,
            agent: 'wait-burst',
            input: [{ role: 'user', content: `job-${b * BATCH + i}` }],
            principal: { id: 'svc', roles: ['runner'] },
          }),
        ),
      );
      await until(`batch ${b} to wait`, async () => (await pendingWaitpoints()) === (b + 1) * BATCH, 60_000);
    }
    expect(await pendingWaitpoints()).toBe(RUNS);
    expect(await runsWith('running')).toBe(RUNS);

    // Twenty times the bound waits, and a run that needs a place in flight still starts and completes.
    await stack.publishRequest(TENANT, {
      requestId: 'free',
      agent: 'no-wait',
      input: [{ role: 'user', content: 'hi' }],
      principal: { id: 'svc', roles: ['runner'] },
    });
    const free = await stack.waitFor(TENANT, threadIdFor(TENANT, 'free'), terminal(runIdFor(TENANT, 'free')), 30_000);
    expect(free.at(-1)?.type).toBe('run.completed');

    // Every waitpoint's id and thread, as the approvals service keeps them.
    const ids = await approvalsDb.sql.query<{ thread_id: string; waitpoint_id: string }>(
      `select thread_id, id as waitpoint_id from ${approvalsDb.sql.table('approvals')}
        where tenant_id = ? and kind = 'waitpoint'`,
      [TENANT],
    );
    expect(ids).toHaveLength(RUNS);

    // One burst: every completion in flight at once.
    const subject = stack.prefix.subject + `.waitpoints.${TENANT}.complete`;
    const replies = await Promise.all(
      ids.map(async ({ thread_id, waitpoint_id }) => {
        const request: WaitpointCompletionRequestInput = {
          waitpointId: waitpoint_id,
          result: { job: thread_id },
          by: 'ci',
        };
        const reply = await stack.nc.request(subject, JSON.stringify(request), { timeout: 60_000 });
        return JSON.parse(new TextDecoder().decode(reply.data)) as ApprovalsReply;
      }),
    );
    expect(replies.filter((r) => !r.ok)).toEqual([]);
    expect(await pendingWaitpoints()).toBe(0);

    await until('every run to complete', async () => (await runsWith('completed')) === RUNS + 1, 240_000);
    // Each run's log: one completion, and the result its own job reported.
    const wrong: string[] = [];
    for (let i = 0; i < ids.length; i += 50) {
      await Promise.all(
        ids.slice(i, i + 50).map(async ({ thread_id }) => {
          const events = await stack.events(TENANT, thread_id);
          const completed = events.filter((e) => e.type === 'waitpoint.completed').length;
          const result = events.find((e) => e.type === 'tool.completed')?.data as { result?: { job?: string } };
          if (completed !== 1 || result?.result?.job !== thread_id || events.at(-1)?.type !== 'run.completed')
            wrong.push(`${thread_id}: ${events.map((e) => e.type).join(', ')}`);
        }),
      );
    }
    expect(wrong).toEqual([]);
    expect(await runsWith('running')).toBe(0);
  });
});
