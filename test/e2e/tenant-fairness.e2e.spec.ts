import path from 'node:path';
import { openServiceDatabase, type Database } from '@ratchet/adapters';
import type { RunOutcome, ToolCallCommand } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

const AGENTS = path.resolve(__dirname, '../agents/loop');
const FLOOD = 600;
const principal = { id: 'alice', roles: ['runner'] };
const hello = (requestId: string) => ({
  requestId,
  agent: 'demo',
  input: [{ role: 'user' as const, content: 'hello' }],
  principal,
});

/**
 * Tenant "flood" publishes FLOOD run requests straight on NATS (no gateway rate limit in front), then
 * tenant "acme" publishes three. The orchestrator decides two requests at a time. The facts compared
 * are positions in the log (its global commit order), not durations.
 */
describe.each([
  { share: '50', fair: true },
  { share: '0', fair: false },
])('a tenant flooding run requests (TENANT_SHARE_PERCENT=$share)', ({ share, fair }) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS, REQUEST_CONCURRENCY: '2', TENANT_SHARE_PERCENT: share }),
      stack.start('tool-executor'),
    ]);
  });
  afterAll(async () => {
    await stack.stop();
  });

  const position = async (tenant: string, type: string, which: 'min' | 'max') => {
    const rows = await stack.orchestratorDb.sql.query<{ p: string | null }>(
      `select ${which}(position)::text as p from ${stack.orchestratorDb.sql.table('thread_events')}
        where tenant_id = ? and type = ?`,
      [tenant, type],
    );
    return Number(rows[0]?.p ?? NaN);
  };

  it(
    fair
      ? "completes the other tenant's runs while the flood is still being admitted"
      : 'first come, first served: the other tenant waits for the whole flood (the case fair shares change)',
    async () => {
      const js = stack.nc.jetstream();
      const floodSubject = `${stack.prefix.subject}.requests.flood`;
      for (let i = 0; i < FLOOD; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, FLOOD - i) }, (_, j) =>
            js.publish(floodSubject, JSON.stringify(hello(`f-${i + j}`)), { msgID: `flood:f-${i + j}` }),
          ),
        );
      }
      for (const id of ['a-1', 'a-2', 'a-3']) await stack.publishRequest('acme', hello(id));

      for (const id of ['a-1', 'a-2', 'a-3'])
        await stack.waitFor('acme', threadIdFor('acme', id), terminal(runIdFor('acme', id)), 120_000);
      const acmeDone = await position('acme', 'run.completed', 'max');
      // Every run of both tenants completes: nothing is lost by waiting in line or by being deferred.
      const completed = async () =>
        stack.orchestratorDb.sql.query<{ tenant_id: string; n: number }>(
          `select tenant_id, count(*)::int as n from ${stack.orchestratorDb.sql.table('runs')}
            where status = 'completed' group by tenant_id order by tenant_id`,
        );
      const deadline = Date.now() + 120_000;
      while ((await completed()).find((c) => c.tenant_id === 'flood')?.n !== FLOOD && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 250));
      expect(await completed()).toEqual([
        { tenant_id: 'acme', n: 3 },
        { tenant_id: 'flood', n: FLOOD },
      ]);
      const floodLastAdmitted = await position('flood', 'run.requested', 'max');
      if (fair) {
        // acme's three runs were over before the flood's last request was even admitted.
        expect(acmeDone).toBeLessThan(floodLastAdmitted);
      } else {
        expect(await position('acme', 'run.requested', 'min')).toBeGreaterThan(floodLastAdmitted);
      }
    },
  );
});

/**
 * The same on the tool executor: tenant "flood" publishes TOOL_FLOOD slow tool calls straight on its
 * command subject, then tenant "acme" publishes two. The executor runs two calls at a time. The facts
 * compared are the order in which the effect ledger recorded the calls' `started` rows.
 */
const TOOL_FLOOD = 24;
describe.each([
  { share: '50', fair: true },
  { share: '0', fair: false },
])('a tenant flooding slow tool calls (tool executor, TENANT_SHARE_PERCENT=$share)', ({ share, fair }) => {
  let stack: TestStack;
  let tools: Database;
  beforeAll(async () => {
    stack = await TestStack.create();
    await stack.start('tool-executor', {
      TOOL_MODULES: path.resolve(__dirname, '../fixtures/tool-modules/slow.tools.ts'),
      TOOL_CONCURRENCY: '2',
      TENANT_SHARE_PERCENT: share,
    });
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
  });
  afterAll(async () => {
    await tools?.close();
    await stack?.stop();
  });

  const call = (tenantId: string, n: number, ms: number): ToolCallCommand => ({
    kind: 'tool.call',
    commandId: `${tenantId}:call-${n}`,
    tenantId,
    threadId: `th-${tenantId}-${n}`,
    runId: `run-${tenantId}-${n}`,
    step: 1,
    callId: `call-${n}`,
    tool: 'test.slow',
    args: { ms },
    idempotencyKey: `${tenantId}:th-${tenantId}-${n}:run-${tenantId}-${n}:1:call-${n}`,
    principal: { id: 'alice', roles: ['runner'] },
  });
  const publish = (c: ToolCallCommand) =>
    stack.nc
      .jetstream()
      .publish(`${stack.prefix.subject}.cmd.tool.${c.tenantId}`, JSON.stringify(c), { msgID: c.commandId });

  it(
    fair
      ? "starts the other tenant's calls while the flood's are still waiting"
      : 'first come, first served: the other tenant waits for the whole flood (the case fair shares change)',
    async () => {
      for (let i = 0; i < TOOL_FLOOD; i++) await publish(call('flood', i, 250));
      for (let i = 0; i < 2; i++) await publish(call('acme', i, 0));
      const ledger = () =>
        tools.sql.query<{ tenant_id: string; state: string; started_at: string }>(
          `select tenant_id, state, to_char(started_at, 'YYYY-MM-DD HH24:MI:SS.US') as started_at
             from ${tools.sql.table('effects')} order by started_at, key`,
        );
      const deadline = Date.now() + 60_000;
      while ((await ledger()).filter((r) => r.state === 'succeeded').length < TOOL_FLOOD + 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      const rows = await ledger();
      // Every call of both tenants ran once: nothing is lost by waiting in line or by being deferred.
      expect(
        rows
          .filter((r) => r.state === 'succeeded')
          .map((r) => r.tenant_id)
          .sort(),
      ).toEqual([...Array<string>(2).fill('acme'), ...Array<string>(TOOL_FLOOD).fill('flood')]);
      const order = rows.map((r) => r.tenant_id);
      const floodAfterAcme = order.length - 1 - order.lastIndexOf('acme');
      if (fair) {
        // acme's calls started while most of the flood's were still waiting.
        expect(floodAfterAcme).toBeGreaterThanOrEqual(TOOL_FLOOD / 2);
      } else {
        expect(floodAfterAcme).toBe(0);
      }
    },
  );
});

/**
 * A bound on one tenant's runs in flight: tenant "busy" may have three runs queued or running. Its three
 * slow runs (a model that takes 4 s) fill it; a fourth request is refused as retryable and recorded on the
 * thread it named, another tenant's run completes meanwhile, and the fourth is accepted when asked again
 * once the three have ended.
 */
describe('a tenant at its bound on runs in flight (TENANT_MAX_ACTIVE_RUNS=3)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS, TENANT_MAX_ACTIVE_RUNS: '3' }),
      stack.start('tool-executor'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const slow = (requestId: string, replyTo?: string) => ({
    ...hello(requestId),
    agent: 'slow',
    ...(replyTo ? { replyTo } : {}),
  });

  it('refuses the tenant a fourth run while three are in flight, as retryable; other tenants and a later retry are served', async () => {
    const outcomes: RunOutcome[] = [];
    const replyTo = `${stack.prefix.subject}.replies.bound`;
    stack.nc.subscribe(replyTo, { callback: (_e, m) => outcomes.push(m.json<RunOutcome>()) });
    const started = (events: { type: string }[]) => events.some((e) => e.type === 'run.started');
    for (const id of ['s-1', 's-2', 's-3']) await stack.publishRequest('busy', slow(id));
    for (const id of ['s-1', 's-2', 's-3']) await stack.waitFor('busy', threadIdFor('busy', id), started);

    await stack.publishRequest('busy', slow('s-4', replyTo));
    const refused = await stack.waitFor('busy', threadIdFor('busy', 's-4'), (events) =>
      events.some((e) => e.type === 'run.rejected'),
    );
    expect(refused.map((e) => e.type)).toEqual(['thread.created', 'run.rejected']);
    expect(refused[1]?.data).toMatchObject({ requestId: 's-4', error: { code: 'tenant.runs_limit', retryable: true } });
    const deadline = Date.now() + 10_000;
    while (outcomes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(outcomes).toEqual([
      expect.objectContaining({
        requestId: 's-4',
        status: 'rejected',
        runId: runIdFor('busy', 's-4'),
        error: expect.objectContaining({ code: 'tenant.runs_limit', retryable: true }),
      }),
    ]);

    // The bound is the tenant's: another tenant's run is not held by it.
    await stack.publishRequest('acme', hello('a-1'));
    const other = await stack.waitFor('acme', threadIdFor('acme', 'a-1'), terminal(runIdFor('acme', 'a-1')), 60_000);
    expect(other.at(-1)?.type).toBe('run.completed');

    for (const id of ['s-1', 's-2', 's-3'])
      expect(
        (await stack.waitFor('busy', threadIdFor('busy', id), terminal(runIdFor('busy', id)), 60_000)).at(-1)?.type,
      ).toBe('run.completed');
    // Asked again (the same request id, a new message) once the three have ended: accepted and run.
    await stack.publishRequest('busy', slow('s-4', replyTo), 'busy:s-4:again');
    const retried = await stack.waitFor('busy', threadIdFor('busy', 's-4'), terminal(runIdFor('busy', 's-4')), 60_000);
    expect(retried.map((e) => e.type)).toEqual(
      expect.arrayContaining(['run.rejected', 'run.requested', 'run.started', 'run.completed']),
    );
    expect(retried.at(-1)?.type).toBe('run.completed');
  });
});
