import path from 'node:path';
import { listRuns } from '@ratchet/adapters';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * Priority in the admission queue (docs/flow-control.md#priority): the tenant runs one run at a time and
 * queues the rest. A blocker holds the place (20 s); a low-priority run (-2 s) asks first, then — 5 s later — two
 * more at -2 s and two at +2 s (an admin's). A run is served as if requested `priority` seconds earlier:
 * the high ones go before the low ones of their time, but not before the low one that asked 5 s earlier
 * (no starvation). Two orchestrators; one is SIGKILLed while the runs wait.
 */

const AGENTS = path.resolve(__dirname, '../agents/priority');
const TENANT = 'prio';
const ENV = {
  AGENTS_DIR: AGENTS,
  TENANT_MAX_ACTIVE_RUNS: '1',
  TENANT_RUNS_OVER_BOUND: 'queue',
  ADMISSION_PASS_MS: '100',
};

const ask = (
  stack: TestStack,
  requestId: string,
  agent: string,
  priority?: number,
  roles = ['runner'],
  replyTo?: string,
) =>
  stack.publishRequest(TENANT, {
    requestId,
    agent,
    input: [{ role: 'user', content: 'hello' }],
    principal: { id: 'alice', roles },
    ...(priority === undefined ? {} : { priority }),
    ...(replyTo ? { replyTo } : {}),
  });
const cli = sourceCommand('apps/cli/src/main.ts');
const thread = (id: string) => threadIdFor(TENANT, id);
const queued = (stack: TestStack, id: string) =>
  stack.waitFor(TENANT, thread(id), (es) => es.some((e) => e.type === 'run.queued'));

describe('priority orders the admission queue without starving anyone, through a SIGKILL', () => {
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

  it('serves the high before the low of their time, and the low that waited longest before both', async () => {
    await ask(stack, 'blocker', 'blocker');
    await stack.waitFor(TENANT, thread('blocker'), (es) => es.some((e) => e.type === 'run.started'));
    await ask(stack, 'old-low', 'ranked', -2);
    await queued(stack, 'old-low');
    await new Promise((r) => setTimeout(r, 5_000));
    await ask(stack, 'low-1', 'ranked', -2);
    await ask(stack, 'low-2', 'ranked', -2);
    await ask(stack, 'high-1', 'ranked', 2, ['runner', 'admin']);
    await ask(stack, 'high-2', 'ranked', 2, ['runner', 'admin']);
    for (const id of ['low-1', 'low-2', 'high-1', 'high-2']) await queued(stack, id);

    // A held run's status (what GET /v1/runs/{id} reads) shows its priority and its queue deadline, and its
    // stored projection is what its log folds to (an SRE's check).
    const [held] = await listRuns(stack.orchestratorDb.sql, TENANT, thread('high-1'));
    const asked = (await stack.events(TENANT, thread('high-1'))).find((e) => e.type === 'run.requested')!;
    expect(held).toMatchObject({
      status: 'queued',
      priority: 2,
      queuedUntil: new Date(Date.parse(asked.at) + 600_000).toISOString(),
    });
    const verify = await runProcess(cli.command, [...cli.args, 'replay', thread('high-1'), '--verify'], {
      ...cli.env,
      ...stack.env,
    });
    expect(verify).toMatchObject({ code: 0 });

    await stack.services.get('orchestrator-a')?.kill('SIGKILL');

    const ids = ['blocker', 'old-low', 'low-1', 'low-2', 'high-1', 'high-2'];
    const ends = await Promise.all(
      ids.map((id) => stack.waitFor(TENANT, thread(id), terminal(runIdFor(TENANT, id)), 120_000)),
    );
    for (const events of ends) expect(events.at(-1)?.type).toBe('run.completed');
    const started = ids
      .map((id, i) => ({ id, at: Date.parse(ends[i]!.find((e) => e.type === 'run.started')!.at) }))
      .sort((a, b) => a.at - b.at)
      .map((s) => s.id);
    expect(started[0]).toBe('blocker');
    expect(started[1]).toBe('old-low');
    expect(started.slice(2, 4).sort()).toEqual(['high-1', 'high-2']);
    expect(started.slice(4).sort()).toEqual(['low-1', 'low-2']);
    // The log keeps each run's priority.
    const requested = ends[4]!.find((e) => e.type === 'run.requested')!;
    expect(requested.data).toMatchObject({ priority: 2 });
    // Once started, a run no longer shows what only a queued run has.
    const [done] = await listRuns(stack.orchestratorDb.sql, TENANT, thread('high-1'));
    expect(done).not.toHaveProperty('priority');
    expect(done).not.toHaveProperty('queuedUntil');
  });

  it("refuses a caller without the admin role that raises a run's priority above its agent's, naming the rule", async () => {
    const replyTo = `${stack.prefix.subject}.test.priority.${Date.now()}`;
    const outcome = stack.nc.subscribe(replyTo, { max: 1 });
    await ask(stack, 'sneaky', 'ranked', 5, ['runner'], replyTo);
    for await (const m of outcome)
      expect(m.json()).toMatchObject({
        status: 'rejected',
        error: {
          code: 'request.priority_forbidden',
          message: expect.stringContaining("raising a run's priority takes the admin role"),
          retryable: false,
        },
      });
    const [row] = await stack.orchestratorDb.sql.query<{ n: number }>(
      `select count(*)::int as n from ${stack.orchestratorDb.sql.table('runs')} where tenant_id = ? and request_id = ?`,
      [TENANT, 'sneaky'],
    );
    expect(row?.n).toBe(0);
  });

  it("takes a tenant's own priority and queued TTL for an agent, set by an operator, on the runs it requests", async () => {
    const other = 'prio-other';
    const set = await runProcess(
      cli.command,
      [
        ...cli.args,
        'agents',
        'settings',
        'set',
        'ranked',
        '--tenant',
        other,
        '--priority',
        '-100',
        '--queue-ttl',
        '900',
      ],
      { ...cli.env, ...stack.env },
    );
    expect(set).toMatchObject({ code: 0 });
    const requested = async (tenant: string, id: string) => {
      await stack.publishRequest(tenant, {
        requestId: id,
        agent: 'ranked',
        input: [{ role: 'user', content: 'hello' }],
        principal: { id: 'alice', roles: ['runner'] },
      });
      const events = await stack.waitFor(tenant, threadIdFor(tenant, id), (es) =>
        es.some((e) => e.type === 'run.requested'),
      );
      return events.find((e) => e.type === 'run.requested')!.data;
    };
    expect(await requested(other, 'o1')).toMatchObject({ priority: -100, limits: { queueTtlSeconds: 900 } });
    // This tenant keeps the agent's: no priority, its queued TTL of 600 s.
    const own = await requested(TENANT, 'p1');
    expect(own).not.toHaveProperty('priority');
    expect(own).toMatchObject({ limits: { queueTtlSeconds: 600 } });
  });
});
