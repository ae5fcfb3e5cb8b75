import path from 'node:path';
import { ApiKeyRepository, openServiceDatabase, type Database } from '@ratchet/adapters';
import type { ApprovalView, ThreadEvent } from '@ratchet/contracts';
import type { ThreadState } from '@ratchet/domain';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { threadIdFor, verifyThread } from '@ratchet/platform';
import { gatewayHttp, pendingApproval as pendingApprovalOf } from './gateway-http';
import { terminal, TestStack } from './stack';

/*
 * Runs that wait for days (issue: a time budget that counts working time). Orchestrator, tool-executor,
 * approvals and gateway as real processes; runs started and approvals decided over HTTP, with short real
 * timeouts: a 5 s working-time budget against waits of 30 s, and an orchestrator SIGKILLed mid-wait.
 */

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/waits');
// One run a pass: a run waiting for a human must never take the place of one the watchdog has to stop.
const WATCHDOG = { WATCHDOG_INTERVAL_MS: '500', WATCHDOG_MIN_IDLE_MS: '1000', WATCHDOG_BATCH: '1' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const types = (events: ThreadEvent[]) => events.map((e) => e.type);

describe('runs that wait for a human, end to end', () => {
  let stack: TestStack;
  let gatewayDb: Database;
  let gatewayUrl = '';
  const keys = { runner: '', approver: '' };

  const http = gatewayHttp(() => gatewayUrl);

  const startRun = async (requestId: string, agent: string, input: string) => {
    const res = await http('POST', '/v1/runs', keys.runner, { agent, input }, { 'Idempotency-Key': requestId });
    expect(res).toMatchObject({ status: 202 });
    return res.body as { runId: string; threadId: string };
  };

  /** The thread's one pending approval, once the approvals service has it. */
  const pendingApproval = (threadId: string) => pendingApprovalOf(http, keys.approver, threadId);

  const approve = async (approval: ApprovalView) => {
    const res = await http('POST', `/v1/approvals/${approval.id}/decision`, keys.approver, { decision: 'approve' });
    expect(res).toMatchObject({ status: 200 });
  };

  const cliCommand = sourceCommand('apps/cli/src/main.ts');
  const cli = (args: string[], key: string) =>
    runProcess(cliCommand.command, [...cliCommand.args, ...args, '--gateway', gatewayUrl, '--api-key', key], {
      ...cliCommand.env,
    });

  const stateOf = async (threadId: string): Promise<ThreadState> =>
    (await stack.projectionAndFold(TENANT, threadId)).folded;

  beforeAll(async () => {
    stack = await TestStack.create();
    gatewayDb = await openServiceDatabase(stack.testDb.url, 'gateway');
    const repo = new ApiKeyRepository(gatewayDb.sql);
    keys.runner = (await repo.create({ tenantId: TENANT, name: 'runner', roles: ['runner'] })).secret;
    keys.approver = (await repo.create({ tenantId: TENANT, name: 'approver', roles: ['approver'] })).secret;
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS, ...WATCHDOG }),
      stack.start('tool-executor'),
      stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' }),
    ]);
    gatewayUrl = `http://127.0.0.1:${(await stack.start('gateway')).port}`;
  });

  afterAll(async () => {
    await stack?.stop();
    await gatewayDb?.close();
  });

  it('with a 5 s budget: a 30 s wait completes, 8 s of work fails naming working time, an expiry names its approval', async () => {
    const [waits, works, expires] = await Promise.all([
      startRun('wait-30s', 'wait-approve', 'Oslo'),
      startRun('wait-then-work', 'wait-then-work', 'Rome'),
      startRun('wait-expire', 'wait-expire', 'Lima'),
    ]);
    const [waitsApproval, worksApproval] = await Promise.all([
      pendingApproval(waits.threadId),
      pendingApproval(works.threadId),
    ]);
    // While it waits, the thread says for what and until when; so do the API, the run search and the CLI,
    // beside a status that stays `running` (its thread is busy).
    const waiting = { on: 'approval', since: expect.any(String), until: waitsApproval.expiresAt };
    expect((await stateOf(waits.threadId)).active?.waiting).toMatchObject(waiting);
    // The stored projection (state and runs rows with their wait) is what the log folds to.
    expect((await verifyThread(stack.orchestratorDb, TENANT, waits.threadId)).divergences).toEqual([]);
    expect(await http('GET', `/v1/runs/${waits.runId}`, keys.runner)).toMatchObject({
      status: 200,
      body: { runId: waits.runId, status: 'running', waiting },
    });
    const search = await http('GET', '/v1/runs?waiting=approval', keys.runner);
    // (The third run's approval expires after 3 s: it may have stopped waiting already.)
    const found = (search.body as { runs: { runId: string; waiting?: { on: string } }[] }).runs;
    expect(found.map((r) => r.runId)).toEqual(expect.arrayContaining([waits.runId, works.runId]));
    expect(
      found.every((r) => r.waiting?.on === 'approval' && [waits, works, expires].some((x) => x.runId === r.runId)),
    ).toBe(true);
    expect((await http('GET', '/v1/runs?waiting=operator', keys.runner)).body).toEqual({ runs: [] });
    expect(await http('GET', '/v1/runs?waiting=later', keys.runner)).toMatchObject({ status: 400 });
    const listed = await cli(['runs', 'list', '--waiting', 'any'], keys.runner);
    expect(listed.stdout).toContain(`running: waits for an approval until ${waitsApproval.expiresAt}`);
    const bad = await cli(['runs', 'list', '--waiting', 'later'], keys.runner);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('invalid --waiting "later": one of approval, waitpoint, operator, any');

    await sleep(10_000);
    await approve(worksApproval);
    const worked = await stack.waitFor(TENANT, works.threadId, terminal(works.runId), 60_000);
    const failed = worked.find((e) => e.type === 'run.failed');
    expect(failed?.data).toMatchObject({ budget: 'workingTime', error: { code: 'budget.exceeded' } });
    const [, workedSeconds, waitedSeconds] =
      /the run has worked ([\d.]+) s \(([\d.]+) s of waiting not counted\)/.exec(
        (failed?.data as { error: { message: string } }).error.message,
      ) ?? [];
    expect(Number(workedSeconds)).toBeGreaterThan(5);
    expect(Number(waitedSeconds)).toBeGreaterThanOrEqual(9);
    // It failed while its slow model call was working, after its approval: not for the time it waited.
    expect(types(worked)).toContain('approval.granted');

    const expired = await stack.waitFor(TENANT, expires.threadId, terminal(expires.runId), 30_000);
    expect(expired.find((e) => e.type === 'tool.failed')?.data).toMatchObject({
      error: {
        code: 'approval.expired',
        message: expect.stringMatching(/^approval \S+ expired at \S+ before anyone decided/),
      },
    });
    expect(expired.at(-1)?.type).toBe('run.completed');

    await sleep(Math.max(0, Date.parse(waitsApproval.requestedAt) + 30_000 - Date.now()));
    await approve(waitsApproval);
    const completed = await stack.waitFor(TENANT, waits.threadId, terminal(waits.runId), 30_000);
    expect(completed.at(-1)?.type).toBe('run.completed');
    expect(types(completed)).not.toContain('run.failed');
  }, 120_000);

  it('20 runs waiting on approvals survive an orchestrator SIGKILL and restart, and all complete', async () => {
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => startRun(`kill-wait-${i}`, 'wait-approve', `city-${i}`)),
    );
    const approvals = await Promise.all(runs.map((r) => pendingApproval(r.threadId)));
    const asked = Date.now();
    await stack.services.get('orchestrator')?.kill('SIGKILL');
    await sleep(8_000); // longer than the runs' budget, with no orchestrator at all
    await stack.start('orchestrator', { AGENTS_DIR: AGENTS, ...WATCHDOG });
    await sleep(Math.max(0, asked + 30_000 - Date.now()));
    await Promise.all(approvals.map(approve));
    const logs = await Promise.all(runs.map((r) => stack.waitFor(TENANT, r.threadId, terminal(r.runId), 60_000)));
    for (const events of logs) {
      expect(events.at(-1)?.type).toBe('run.completed');
      expect(types(events).filter((t) => t === 'tool.completed')).toHaveLength(1);
    }
  }, 150_000);

  it('waiting runs leave the bound on runs in flight and meet a bound of their own', async () => {
    const restartOrchestrator = async (env: Record<string, string>) => {
      await stack.services.get('orchestrator')?.kill('SIGKILL');
      await stack.start('orchestrator', { AGENTS_DIR: AGENTS, ...WATCHDOG, ...env });
    };
    const waitingCount = async () =>
      (
        await stack.orchestratorDb.sql.query<{ n: number }>(
          `select count(*)::int as n from ${stack.orchestratorDb.sql.table('runs')}
            where tenant_id = ? and status = 'running' and waiting_on is not null`,
          [TENANT],
        )
      )[0]?.n ?? 0;
    await restartOrchestrator({ TENANT_MAX_ACTIVE_RUNS: '10' });
    // 50 runs parked on approvals, started 5 at a time (each batch waits before the next starts).
    const parked: { runId: string; threadId: string }[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const started = await Promise.all(
        Array.from({ length: 5 }, (_, i) => startRun(`parked-${batch}-${i}`, 'wait-approve', `p${batch}x${i}`)),
      );
      await Promise.all(started.map((r) => pendingApproval(r.threadId)));
      parked.push(...started);
    }
    expect(await waitingCount()).toBe(50);
    // Five times the in-flight bound waits for a human, and a run of another agent still starts and completes.
    const free = await startRun('free-under-10', 'no-wait', 'hi');
    expect((await stack.waitFor(TENANT, free.threadId, terminal(free.runId))).at(-1)?.type).toBe('run.completed');

    // With a waiting bound of 50, the next run is refused with its own code: at the edge (429) and, for a
    // request published on the bus, recorded on its thread.
    await restartOrchestrator({ TENANT_MAX_ACTIVE_RUNS: '10', TENANT_MAX_WAITING_RUNS: '50' });
    const refused = await http(
      'POST',
      '/v1/runs',
      keys.runner,
      { agent: 'no-wait', input: 'hi' },
      {
        'Idempotency-Key': 'refused-at-50',
      },
    );
    expect(refused).toMatchObject({
      status: 429,
      body: { code: 'tenant.waiting_runs_limit', limit: 50, detail: expect.stringContaining('50 runs waiting') },
    });
    await stack.publishRequest(TENANT, {
      requestId: 'published-at-50',
      agent: 'no-wait',
      input: [{ role: 'user', content: 'hi' }],
      principal: { id: 'svc', roles: ['runner'] },
    });
    const published = await stack.waitFor(TENANT, threadIdFor(TENANT, 'published-at-50'), (ev) =>
      types(ev).includes('run.rejected'),
    );
    expect(published.find((e) => e.type === 'run.rejected')?.data).toMatchObject({
      error: { code: 'tenant.waiting_runs_limit', retryable: true },
    });

    // Once the humans decide, every parked run completes, and the tenant may start runs again.
    const approvals = await Promise.all(parked.map((r) => pendingApproval(r.threadId)));
    await Promise.all(approvals.map(approve));
    for (const r of parked) {
      expect((await stack.waitFor(TENANT, r.threadId, terminal(r.runId))).at(-1)?.type).toBe('run.completed');
    }
    expect(await waitingCount()).toBe(0);
    const after = await startRun('free-after', 'no-wait', 'hi');
    expect((await stack.waitFor(TENANT, after.threadId, terminal(after.runId))).at(-1)?.type).toBe('run.completed');
  }, 240_000);
});
