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
        // Two handlers take requests in arrival order: acme's first is taken when the flood's second-last
        // ends, so it may be decided beside the flood's last, never before any other.
        const rows = await stack.orchestratorDb.sql.query<{ p: string }>(
          `select position::text as p from ${stack.orchestratorDb.sql.table('thread_events')}
            where tenant_id = 'flood' and type = 'run.requested' order by position desc offset 1 limit 1`,
        );
        expect(await position('acme', 'run.requested', 'min')).toBeGreaterThan(Number(rows[0]?.p ?? NaN));
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
 * slow runs (a model that takes 4 s), started over HTTP, fill it. A fourth over HTTP gets 429 at once
 * (nothing goes on the bus); one published straight on NATS is refused by the orchestrator as retryable
 * and recorded on its thread; a resend of a run in flight is still answered; another tenant's run
 * completes meanwhile; both fourth requests are accepted when asked again once the three have ended.
 */
describe('a tenant at its bound on runs in flight (TENANT_MAX_ACTIVE_RUNS=3)', () => {
  const KEY = 'rk_e2e_runs_in_flight_bootstrap_key';
  let stack: TestStack;
  let base: string;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS, TENANT_MAX_ACTIVE_RUNS: '3' }),
      stack.start('tool-executor'),
    ]);
    const gateway = await stack.start('gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: 'busy' });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const startOverHttp = (key: string) =>
    fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ agent: 'slow', input: 'hello' }),
    });
  const slow = (requestId: string, replyTo?: string) => ({
    ...hello(requestId),
    agent: 'slow',
    ...(replyTo ? { replyTo } : {}),
  });
  const started = (events: { type: string }[]) => events.some((e) => e.type === 'run.started');
  const completed = async (requestId: string) =>
    (await stack.waitFor('busy', threadIdFor('busy', requestId), terminal(runIdFor('busy', requestId)), 60_000)).at(-1)
      ?.type;

  it('refuses the tenant a fourth run while three are in flight (429 over HTTP, a retryable rejection on NATS); a resend, other tenants and a later retry are served', async () => {
    for (const id of ['h-1', 'h-2', 'h-3']) {
      const res = await startOverHttp(id);
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ runId: runIdFor('busy', id) });
    }
    for (const id of ['h-1', 'h-2', 'h-3']) await stack.waitFor('busy', threadIdFor('busy', id), started);

    // Over HTTP: told at once, before anything is on the bus.
    const refused = await startOverHttp('h-4');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({ status: 429, code: 'tenant.runs_limit', limit: 3 });
    // A resend of a run in flight is that run, not a fourth: answered, whatever the count.
    const resent = await startOverHttp('h-1');
    expect(resent.status).toBe(202);
    expect(await resent.json()).toMatchObject({ runId: runIdFor('busy', 'h-1') });

    // Straight on NATS (no gateway in front): the orchestrator refuses it, retryable, on the thread it named.
    const outcomes: RunOutcome[] = [];
    const replyTo = `${stack.prefix.subject}.replies.bound`;
    stack.nc.subscribe(replyTo, { callback: (_e, m) => outcomes.push(m.json<RunOutcome>()) });
    await stack.publishRequest('busy', slow('s-4', replyTo));
    const rejected = await stack.waitFor('busy', threadIdFor('busy', 's-4'), (events) =>
      events.some((e) => e.type === 'run.rejected'),
    );
    expect(rejected.map((e) => e.type)).toEqual(['thread.created', 'run.rejected']);
    expect(rejected[1]?.data).toMatchObject({
      requestId: 's-4',
      error: { code: 'tenant.runs_limit', retryable: true },
    });
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

    for (const id of ['h-1', 'h-2', 'h-3']) expect(await completed(id)).toBe('run.completed');
    // Asked again once the three have ended: accepted and run, over HTTP and over NATS.
    expect((await startOverHttp('h-4')).status).toBe(202);
    await stack.publishRequest('busy', slow('s-4', replyTo), 'busy:s-4:again');
    expect(await completed('h-4')).toBe('run.completed');
    expect(await completed('s-4')).toBe('run.completed');
    // The HTTP refusal never reached the bus: h-4's thread holds its one run, no rejection.
    const h4 = await stack.events('busy', threadIdFor('busy', 'h-4'));
    expect(h4.filter((e) => e.type === 'run.rejected')).toEqual([]);
    expect(h4.filter((e) => e.type === 'run.requested')).toHaveLength(1);
    // And one run per request id, however often it was sent.
    const h1 = await stack.events('busy', threadIdFor('busy', 'h-1'));
    expect(h1.filter((e) => e.type === 'run.started')).toHaveLength(1);
  });
});
