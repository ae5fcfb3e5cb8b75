import path from 'node:path';
import { ApiKeyRepository, openServiceDatabase, type Database } from '@ratchet/adapters';
import { gatewayHttp, pendingApproval as pendingApprovalOf, type GatewayAnswer } from './gateway-http';
import { terminal, TestStack } from './stack';

/*
 * Idempotency-Key on every route that creates or decides something, through the real gateway and the
 * services behind it: the same request with a key again gets the first answer (status and body) and is
 * not done again; another request with the key is refused with 409 `request.conflict`. Erasing a thread
 * over HTTP erases the keys that named it.
 */

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/waits');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Idempotency-Key on every create and decide route', () => {
  let stack: TestStack;
  let gatewayDb: Database;
  let gatewayUrl = '';
  const keys = { runner: '', approver: '', admin: '', operator: '', other: '' };
  const http = gatewayHttp(() => gatewayUrl);

  const startRun = async (requestId: string, agent: string, input: string) => {
    const res = await http('POST', '/v1/runs', keys.runner, { agent, input }, { 'Idempotency-Key': requestId });
    expect(res).toMatchObject({ status: 202 });
    return res.body as { runId: string; threadId: string };
  };

  const pendingApproval = (threadId: string) => pendingApprovalOf(http, keys.approver, threadId);

  const keyRows = async (where: string, params: unknown[]) =>
    (
      await gatewayDb.sql.query<{ n: number }>(
        `select count(*)::int as n from ${gatewayDb.sql.table('idempotency_keys')} where ${where}`,
        params,
      )
    )[0]!.n;

  beforeAll(async () => {
    stack = await TestStack.create();
    gatewayDb = await openServiceDatabase(stack.testDb.url, 'gateway');
    const repo = new ApiKeyRepository(gatewayDb.sql);
    const make = async (tenantId: string, name: string, roles: string[]) =>
      (await repo.create({ tenantId, name, roles })).secret;
    keys.runner = await make(TENANT, 'runner', ['runner']);
    keys.approver = await make(TENANT, 'approver', ['approver']);
    keys.admin = await make(TENANT, 'admin', ['admin']);
    keys.operator = await make('*', 'operator', ['operator']);
    keys.other = await make('globex', 'runner', ['runner']);
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('tool-executor'),
      stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' }),
    ]);
    gatewayUrl = `http://127.0.0.1:${(await stack.start('gateway')).port}`;
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await gatewayDb?.close();
  });

  /** A route, the request it is sent (`a`) and another request with the same key (`b`). */
  interface Route {
    name: string;
    send: (idempotencyKey: string, variant: 'a' | 'b') => Promise<GatewayAnswer>;
    /** What must hold after the first request and its replay: it was done once. */
    doneOnce?: () => Promise<void>;
  }

  it('answers a replay with the first answer and another body with 409 request.conflict, on every route', async () => {
    const definition = (reply: string) => ({
      name: 'idem-agent',
      model: { provider: 'scripted', script: [{ reply }] },
    });
    // Runs to decide and to cancel: each waits for an approval.
    const toDecide = await startRun('idem-to-decide', 'wait-approve', 'Oslo');
    const toCancel = await startRun('idem-to-cancel', 'wait-approve', 'Rome');
    const approval = await pendingApproval(toDecide.threadId);
    await pendingApproval(toCancel.threadId);

    const with_ = (k: string) => ({ 'Idempotency-Key': k });
    const routes: Route[] = [
      {
        name: 'POST /v1/threads',
        send: (k, v) => http('POST', '/v1/threads', keys.runner, { agent: 'no-wait', input: v }, with_(k)),
      },
      {
        name: 'POST /v1/runs',
        send: (k, v) => http('POST', '/v1/runs', keys.runner, { agent: 'no-wait', input: v }, with_(k)),
      },
      {
        name: 'POST /v1/agents',
        send: (k, v) => http('POST', '/v1/agents', keys.admin, definition(v), with_(k)),
        doneOnce: async () => {
          const latest = await http('GET', '/v1/agents/idem-agent', keys.admin);
          expect(latest.body).toMatchObject({ agent: { version: 1 } });
        },
      },
      {
        name: 'POST /v1/deployment/agents',
        send: (k, v) =>
          http('POST', '/v1/deployment/agents', keys.operator, { ...definition(v), name: 'idem-shared' }, with_(k)),
      },
      {
        name: 'POST /v1/schedules',
        send: (k, v) =>
          http(
            'POST',
            '/v1/schedules',
            keys.runner,
            { id: 'idem-sched', agent: 'no-wait', input: 'hi', everySeconds: v === 'a' ? 3600 : 7200 },
            with_(k),
          ),
      },
      {
        name: 'PATCH /v1/schedules/:id',
        send: (k, v) => http('PATCH', '/v1/schedules/idem-sched', keys.runner, { paused: v === 'a' }, with_(k)),
      },
      {
        name: 'POST /v1/approvals/:id/decision',
        send: (k, v) =>
          http(
            'POST',
            `/v1/approvals/${approval.id}/decision`,
            keys.approver,
            { decision: v === 'a' ? 'approve' : 'reject' },
            with_(k),
          ),
      },
      {
        name: 'POST /v1/revocations',
        send: (k, v) => http('POST', '/v1/revocations', keys.admin, { subject: `idem-sub-${v}` }, with_(k)),
        doneOnce: async () => {
          const list = await http('GET', '/v1/revocations', keys.admin);
          const entries = (list.body as { revocations: { subject: string }[] }).revocations;
          expect(entries.filter((e) => e.subject === 'idem-sub-a')).toHaveLength(1);
        },
      },
      {
        name: 'POST /v1/runs/:runId/cancel',
        send: (k, v) => http('POST', `/v1/runs/${toCancel.runId}/cancel`, keys.runner, { reason: v }, with_(k)),
      },
    ];

    const seen: { name: string; first: number; replay: number; other: number; code: unknown }[] = [];
    for (const route of routes) {
      const key = `idem-${route.name.replace(/[^a-z]+/gi, '-')}`;
      const first = await route.send(key, 'a');
      expect({ route: route.name, ok: [200, 201, 202].includes(first.status), first }).toMatchObject({
        route: route.name,
        ok: true,
      });
      // Let what the first one started happen before it is asked again (an approval granted, a run cancelled).
      await sleep(300);
      const replay = await route.send(key, 'a');
      expect({ route: route.name, ...replay }).toEqual({ route: route.name, ...first });
      await route.doneOnce?.();
      const other = await route.send(key, 'b');
      seen.push({
        name: route.name,
        first: first.status,
        replay: replay.status,
        other: other.status,
        code: other.body['code'],
      });
      expect(other.body).toMatchObject({ code: 'request.conflict', idempotencyKey: key });
    }
    expect(seen.map((s) => [s.name, s.other, s.code])).toEqual(routes.map((r) => [r.name, 409, 'request.conflict']));

    // The decision and the cancel were done once: the run of each ended as they said.
    const decided = await stack.waitFor(TENANT, toDecide.threadId, terminal(toDecide.runId), 60_000);
    expect(decided.map((e) => e.type)).toContain('approval.granted');
    expect(decided.at(-1)?.type).toBe('run.completed');
    const cancelled = await stack.waitFor(TENANT, toCancel.threadId, terminal(toCancel.runId), 60_000);
    expect(cancelled.at(-1)?.type).toBe('run.cancelled');

    // A key is the tenant's: another tenant with the same key and body starts its own run.
    const runsKey = 'idem-POST-v-runs';
    const theirs = await http('POST', '/v1/runs', keys.other, { agent: 'no-wait', input: 'a' }, with_(runsKey));
    expect(theirs.status).toBe(202);
    const ours = await routes[1]!.send(runsKey, 'a');
    expect(theirs.body['runId']).not.toBe(ours.body['runId']);
  }, 180_000);

  it('a key is the sender’s: another principal of the tenant with the same key and body is refused', async () => {
    const runner2 = (
      await new ApiKeyRepository(gatewayDb.sql).create({ tenantId: TENANT, name: 'runner-2', roles: ['runner'] })
    ).secret;
    const body = { agent: 'no-wait', input: 'hi' };
    expect((await http('POST', '/v1/runs', keys.runner, body, { 'Idempotency-Key': 'idem-sender' })).status).toBe(202);
    const res = await http('POST', '/v1/runs', runner2, body, { 'Idempotency-Key': 'idem-sender' });
    expect(res).toMatchObject({ status: 409, body: { code: 'request.conflict' } });
  });

  it('erasing a thread over HTTP erases the keys that named it or its runs', async () => {
    const started = await http(
      'POST',
      '/v1/threads',
      keys.runner,
      { agent: 'no-wait', input: 'erase me' },
      {
        'Idempotency-Key': 'idem-erase-thread',
      },
    );
    expect(started.status).toBe(202);
    const { threadId, runId } = started.body as { threadId: string; runId: string };
    await stack.waitFor(TENANT, threadId, terminal(runId));
    const again = await http(
      'POST',
      '/v1/runs',
      keys.runner,
      { agent: 'no-wait', input: 'and again', threadId },
      { 'Idempotency-Key': 'idem-erase-second' },
    );
    expect(again.status).toBe(202);
    await stack.waitFor(TENANT, threadId, terminal((again.body as { runId: string }).runId));
    expect(await keyRows('tenant_id = ? and thread_id = ?', [TENANT, threadId])).toBe(2);

    let erased: GatewayAnswer | undefined;
    for (let i = 0; i < 50; i++) {
      erased = await http('DELETE', `/v1/threads/${threadId}`, keys.admin);
      if (erased.status !== 409) break; // its run's last commit may still be settling
      await sleep(200);
    }
    expect(erased).toMatchObject({ status: 200, body: { erased: true } });
    expect((erased!.body as { removed: Record<string, number> }).removed['gateway.idempotency_keys']).toBe(2);
    expect(await keyRows('tenant_id = ? and (thread_id = ? or key like ?)', [TENANT, threadId, 'idem-erase-%'])).toBe(
      0,
    );
  }, 120_000);
});
