import type { NestExpressApplication } from '@nestjs/platform-express';
import { ApiKeyRepository, connectNats, openDatabase, GATEWAY_MIGRATIONS, type Database } from '@ratchet/adapters';
import { loadConfig } from '@ratchet/platform';
import type { AddressInfo } from 'node:net';
// The sweep enumerates the gateway's routes from its own router, so it runs the app in-process.
// eslint-disable-next-line no-restricted-imports -- the app itself, not a library
import { gatewayConfigSchema } from '@ratchet/gateway/src/gateway.config';
// eslint-disable-next-line no-restricted-imports -- the app itself, not a library
import { createGatewayApp } from '@ratchet/gateway/src/http/create-app';
// eslint-disable-next-line no-restricted-imports -- the app itself, not a library
import { createLogger } from '@ratchet/gateway/src/logging/logger';
// eslint-disable-next-line no-restricted-imports -- the app itself, not a library
import { listRoutes, type RouteInfo } from '@ratchet/gateway/src/openapi/routes';
import { terminal, TestStack } from './stack';
import { catalogOf, ToolProcess } from './tool-processes';

/*
 * The BOLA sweep (architecture §8, issue #8). Routes are enumerated from the application itself, so a
 * new endpoint cannot escape: a route without a case below fails the test. For every route:
 *  - no credential → 401 (unless @Public);
 *  - a credential without the role the route requires → 403;
 *  - tenant A's credential with tenant B's ids → 404, exactly (type, title, detail) as for an id that
 *    does not exist, and tenant B's thread, runs and memory are unchanged afterwards.
 * The orchestrator, tool-executor, memory and approvals run as processes; the gateway in-process,
 * because the sweep needs its router. Tenant B also owns an agent and a tool service (bound to B by
 * its subjects); deployment-level routes take only an operator credential, which no tenant route takes.
 */

const A = 'tenanta';
const B = 'tenantb';
const ALL = ['runner', 'viewer', 'approver', 'admin'];

interface Ids {
  threadId: string;
  runId: string;
  namespace: string;
  key: string;
  approvalId: string;
  agent: string;
  scheduleId: string;
  revocationId: string;
  waitpointId: string;
}

interface Case {
  path: (ids: Ids) => string;
  body?: unknown;
  /** What tenant A gets with B's ids; 404 unless the route takes no tenant-owned id. */
  crossTenant?: number;
  /** Why the route takes no tenant-owned id (and so has no 404 to give). */
  why?: string;
  /** A public route: what it answers without a credential (200 unless its own token is the credential). */
  anonymous?: number;
  /** For lists and searches: B's ids must not appear in what A gets. */
  mustNotContain?: (ids: Ids) => string[];
}

const enc = encodeURIComponent;

const CASES: Record<string, Case> = {
  'GET /health/live': { path: () => '/health/live', crossTenant: 200, why: 'public probe' },
  'GET /health/ready': { path: () => '/health/ready', crossTenant: 200, why: 'public probe' },
  'GET /metrics': { path: () => '/metrics', crossTenant: 200, why: 'public Prometheus scrape (no tenant data)' },
  'POST /v1/runs': {
    path: () => '/v1/runs',
    body: (ids: Ids) => ({ agent: 'demo', input: 'hi', threadId: ids.threadId }),
    crossTenant: 202,
    why: "a thread id is a name within the caller's tenant: this starts a run on A's own thread of that name",
  },
  'GET /v1/runs': {
    path: (i) => `/v1/runs?threadId=${i.threadId}`,
    crossTenant: 200,
    mustNotContain: (i) => [i.runId, i.threadId],
  },
  'GET /v1/runs/:runId': { path: (i) => `/v1/runs/${i.runId}` },
  'GET /v1/usage': {
    path: (i) => `/v1/usage?by=run,agent&runId=${i.runId}`,
    crossTenant: 200,
    why: "filters the caller's own tenant's usage: B's run is none of A's",
    mustNotContain: (i) => [i.runId, i.agent],
  },
  'POST /v1/runs/:runId/cancel': { path: (i) => `/v1/runs/${i.runId}/cancel`, body: { reason: 'bola' } },
  'GET /v1/runs/:runId/outcome': { path: (i) => `/v1/runs/${i.runId}/outcome?waitSeconds=0` },
  'POST /v1/threads': {
    path: () => '/v1/threads',
    body: { agent: 'demo', input: 'hi' },
    crossTenant: 202,
    why: 'takes no id: creates a thread in the caller’s tenant',
  },
  'GET /v1/threads': { path: () => '/v1/threads', crossTenant: 200, mustNotContain: (i) => [i.threadId] },
  'GET /v1/threads/:threadId': { path: (i) => `/v1/threads/${i.threadId}` },
  'DELETE /v1/threads/:threadId': { path: (i) => `/v1/threads/${i.threadId}` },
  'GET /v1/threads/:threadId/events': { path: (i) => `/v1/threads/${i.threadId}/events` },
  'GET /v1/threads/:threadId/events/stream': { path: (i) => `/v1/threads/${i.threadId}/events/stream` },
  'GET /v1/threads/:threadId/stream': { path: (i) => `/v1/threads/${i.threadId}/stream?mode=messages,events` },
  'PUT /v1/memory/items/:namespace/:key': {
    path: (i) => `/v1/memory/items/${enc(i.namespace)}/${enc(i.key)}`,
    // Conditional on B's version: A has no such item, so nothing may be written anywhere.
    body: { value: 'overwritten by A', expectedVersion: 1 },
    crossTenant: 409,
    why: 'a namespace is a name within the tenant; on an item A does not have, expectedVersion fails',
  },
  'GET /v1/memory/items/:namespace/:key': { path: (i) => `/v1/memory/items/${enc(i.namespace)}/${enc(i.key)}` },
  'DELETE /v1/memory/items/:namespace/:key': { path: (i) => `/v1/memory/items/${enc(i.namespace)}/${enc(i.key)}` },
  'GET /v1/memory/items': {
    path: (i) => `/v1/memory/items?prefix=${enc(i.namespace)}`,
    crossTenant: 200,
    mustNotContain: (i) => [i.key],
  },
  'GET /v1/memory/search': {
    path: () => `/v1/memory/search?q=bolasecret`,
    crossTenant: 200,
    mustNotContain: (i) => [i.key],
  },
  'GET /v1/agents': { path: () => '/v1/agents', crossTenant: 200, mustNotContain: (i) => [i.agent] },
  'GET /v1/agents/:name': { path: (i) => `/v1/agents/${i.agent}` },
  'POST /v1/agents': {
    path: () => '/v1/agents',
    body: (i: Ids) => ({ name: i.agent, model: { provider: 'scripted', script: [{ reply: 'overwritten by A' }] } }),
    crossTenant: 201,
    why: "an agent name is a name within the caller's tenant: this registers A's own agent of that name; B's is unchanged",
  },
  'GET /v1/deployment/agents': {
    path: () => '/v1/deployment/agents',
    crossTenant: 403,
    why: 'deployment-level: a tenant credential is refused whatever its roles',
  },
  'POST /v1/deployment/agents': {
    path: () => '/v1/deployment/agents',
    body: { name: 'demo', model: { provider: 'scripted', script: [{ reply: 'hijacked' }] } },
    crossTenant: 403,
    why: 'deployment-level: a tenant admin cannot change what every tenant runs',
  },
  'GET /v1/tools': {
    path: () => '/v1/tools',
    crossTenant: 200,
    mustNotContain: () => ['units.convert', 'notes.append'],
  },
  'GET /v1/schedules': { path: () => '/v1/schedules', crossTenant: 200, mustNotContain: (i) => [i.scheduleId] },
  'POST /v1/schedules': {
    path: () => '/v1/schedules',
    body: (i: Ids) => ({ id: i.scheduleId, agent: 'demo', input: 'by A', everySeconds: 3600, paused: true }),
    crossTenant: 201,
    why: "a schedule id is a name within the caller's tenant: this creates A's own schedule of that name; B's is unchanged",
  },
  'GET /v1/schedules/:id': { path: (i) => `/v1/schedules/${i.scheduleId}` },
  'PATCH /v1/schedules/:id': { path: (i) => `/v1/schedules/${i.scheduleId}`, body: { paused: false } },
  'DELETE /v1/schedules/:id': { path: (i) => `/v1/schedules/${i.scheduleId}` },
  'GET /v1/webhooks/deliveries': {
    path: () => '/v1/webhooks/deliveries',
    crossTenant: 200,
    why: "takes no id: the caller's own tenant's deliveries",
  },
  'GET /v1/webhooks/secret': {
    path: () => '/v1/webhooks/secret',
    crossTenant: 200,
    why: "takes no id: the caller's own tenant's secret",
  },
  'POST /v1/webhooks/secret/rotate': {
    path: () => '/v1/webhooks/secret/rotate',
    body: { overlapSeconds: 0 },
    crossTenant: 200,
    why: "takes no id: rotates the caller's own tenant's secret",
  },
  'GET /v1/approvals': {
    path: (i) => `/v1/approvals?threadId=${i.threadId}`,
    crossTenant: 200,
    mustNotContain: (i) => [i.threadId],
  },
  'GET /v1/approvals/:id': { path: (i) => `/v1/approvals/${i.approvalId}` },
  'GET /v1/revocations': {
    path: () => '/v1/revocations',
    crossTenant: 200,
    mustNotContain: (i) => [i.revocationId, 'b-revoked-subject'],
  },
  'POST /v1/revocations': {
    path: () => '/v1/revocations',
    body: { subject: 'b-revoked-subject', reason: 'by A' },
    crossTenant: 201,
    why: "a JWT subject is a name within the caller's tenant: this adds A's own entry; B's list is unchanged",
  },
  'DELETE /v1/revocations/:id': { path: (i) => `/v1/revocations/${i.revocationId}` },
  'POST /v1/approvals/:id/decision': {
    path: (i) => `/v1/approvals/${i.approvalId}/decision`,
    body: { decision: 'approve', reason: 'bola' },
  },
  'GET /v1/waitpoints': {
    path: (i) => `/v1/waitpoints?threadId=${i.threadId}`,
    crossTenant: 200,
    mustNotContain: (i) => [i.threadId, i.waitpointId],
  },
  'GET /v1/waitpoints/:id': { path: (i) => `/v1/waitpoints/${i.waitpointId}` },
  'POST /v1/waitpoints/callback/:tenant/:id/:token': {
    // Public (the token is the credential): B's waitpoint with a token that is not its own is unknown.
    path: (i) => `/v1/waitpoints/callback/${B}/${i.waitpointId}/k1.1893456000.${'A'.repeat(43)}`,
    body: { result: { hijacked: 'by A' } },
    anonymous: 404,
  },
  'POST /v1/waitpoints/:id/complete': {
    path: (i) => `/v1/waitpoints/${i.waitpointId}/complete`,
    body: { result: { hijacked: 'by A' } },
  },
};

const keyOf = (r: RouteInfo) => `${r.method} ${r.path}`;

describe('gateway: BOLA sweep over every route', () => {
  let stack: TestStack;
  let app: NestExpressApplication;
  let db: Database;
  let base: string;
  let routes: RouteInfo[];
  const secrets: Record<string, string> = {};
  let bIds: Ids;
  /** Ids of the same shape that exist nowhere. */
  let missing: Ids;

  const call = (method: string, path: string, secret: string | undefined, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        ...(secret ? { authorization: `Bearer ${secret}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(20_000),
    });

  let bTools: ToolProcess;
  beforeAll(async () => {
    stack = await TestStack.create();
    // Tenant B's own tool service (Python, bound to B by its subjects).
    bTools = ToolProcess.spawn('b tools', 'python3', ['examples/remote-tool-service-python/tool_service.py'], {
      NATS_URL: stack.env['NATS_URL']!,
      RATCHET_SUBJECT_PREFIX: stack.prefix.subject,
      RATCHET_TENANT: B,
    });
    await bTools.waitForLog('serving');
    await Promise.all([
      stack.start('orchestrator'),
      stack.start('tool-executor', { REMOTE_DISCOVERY_INTERVAL_MS: '500' }),
      stack.start('memory'),
      stack.start('approvals'),
    ]);
    const config = loadConfig(
      gatewayConfigSchema,
      {
        ...stack.env,
        GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
        GATEWAY_QUERY_TIMEOUT_MS: '10000',
        WAITPOINT_CALLBACK_KEYS: `k1:${'b'.repeat(40)}`,
      },
      'gateway',
    );
    db = await openDatabase({ url: stack.testDb.url, schema: 'gateway', migrations: GATEWAY_MIGRATIONS });
    await db.migrate();
    const keys = new ApiKeyRepository(db.sql);
    const make = async (name: string, tenantId: string, roles: string[]) =>
      (secrets[name] = (await keys.create({ tenantId, name, roles })).secret);
    await make('a-all', A, ALL);
    await make('b-all', B, ALL);
    for (const role of ALL) await make(`a-${role}`, A, [role]);
    await make('a-none', A, []);
    // A deployment operator credential (ratchet keys create --operator), and a tenant key that claims the role.
    await make('operator', '*', ['operator']);
    await make('a-claims-operator', A, ['admin', 'operator']);

    const appDb = await openDatabase({ url: stack.testDb.url, schema: 'gateway', migrations: GATEWAY_MIGRATIONS });
    const nc = await connectNats({ url: config.NATS_URL, name: 'gateway-bola' });
    app = await createGatewayApp({
      config,
      db: appDb,
      nc,
      logger: createLogger({ level: 'silent', instance: 'bola' }),
    });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    routes = listRoutes(app);

    // Tenant B owns a finished run (and so a thread with a log) and a memory item.
    const started = await call('POST', '/v1/runs', secrets['b-all'], { agent: 'demo', input: 'Weather in Oslo?' });
    expect(started.status).toBe(202);
    const run = (await started.json()) as { runId: string; threadId: string };
    await stack.waitFor(B, run.threadId, terminal(run.runId));
    // Tenant B's own agent, using B's own tool.
    await catalogOf(stack.nc, stack.prefix.subject, B, (c) => c.tools.some((t) => t.name === 'units.convert'));
    const agent = await call('POST', '/v1/agents', secrets['b-all'], {
      name: 'b-private',
      instructions: 'bolasecret instructions',
      model: { provider: 'scripted', script: [{ reply: 'b only' }] },
      tools: [{ name: 'units.convert' }],
    });
    expect(agent.status).toBe(201);
    const put = await call('PUT', `/v1/memory/items/${enc('users/bob')}/favourite`, secrets['b-all'], {
      value: { colour: 'teal' },
      text: 'bolasecret teal',
    });
    expect(put.status).toBe(201);
    // Tenant B's schedule (paused: it never ticks during the sweep).
    const schedule = await call('POST', '/v1/schedules', secrets['b-all'], {
      id: 'b-nightly',
      agent: 'b-private',
      input: 'bolasecret nightly',
      cron: '0 2 * * *',
      timezone: 'Europe/Oslo',
      paused: true,
    });
    expect(schedule.status).toBe(201);
    // Tenant B's JWT deny-list entry.
    const revocation = await call('POST', '/v1/revocations', secrets['b-all'], {
      subject: 'b-revoked-subject',
      reason: 'bolasecret',
    });
    expect(revocation.status).toBe(201);
    // Tenant B's run waiting on a waitpoint (its own agent, the built-in wait.external).
    const waiter = await call('POST', '/v1/agents', secrets['b-all'], {
      name: 'b-waits',
      model: {
        provider: 'scripted',
        script: [
          { when: { afterTools: false }, call: [{ tool: 'wait.external', args: { about: 'bolasecret job' } }] },
          { reply: 'done' },
        ],
      },
      tools: [{ name: 'wait.external' }],
    });
    expect(waiter.status).toBe(201);
    const waiting = await call('POST', '/v1/runs', secrets['b-all'], { agent: 'b-waits', input: 'wait' });
    expect(waiting.status).toBe(202);
    const waitingRun = (await waiting.json()) as { runId: string; threadId: string };
    const waitEvents = await stack.waitFor(B, waitingRun.threadId, (es) =>
      es.some((e) => e.type === 'waitpoint.created'),
    );
    const waitpointId = (waitEvents.find((e) => e.type === 'waitpoint.created')?.data as { waitpointId: string })
      .waitpointId;
    // Kept by the approvals service once the thread's outbox row reached it: what the sweep must leave pending.
    let kept = await call('GET', `/v1/approvals/${waitpointId}`, secrets['b-all']);
    for (let i = 0; i < 100 && kept.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      kept = await call('GET', `/v1/approvals/${waitpointId}`, secrets['b-all']);
    }
    expect(await kept.json()).toMatchObject({ kind: 'waitpoint', status: 'pending' });
    bIds = {
      waitpointId,
      threadId: run.threadId,
      runId: run.runId,
      namespace: 'users/bob',
      key: 'favourite',
      approvalId: 'apr_bola_b',
      agent: 'b-private',
      scheduleId: 'b-nightly',
      revocationId: ((await revocation.json()) as { id: string }).id,
    };
    missing = {
      waitpointId: 'wp_missing',
      threadId: 'th_missing0000000000000',
      runId: 'run_missing000000000000',
      namespace: 'users/nobody',
      key: 'nothing',
      approvalId: 'apr_missing',
      agent: 'no-such-agent',
      scheduleId: 'no-such-schedule',
      revocationId: '00000000-0000-4000-8000-000000000000',
    };
  });

  afterAll(async () => {
    await app?.close();
    await db?.close();
    await stack?.stop();
    await bTools?.kill();
  });

  /** Tenant B's state, to prove the sweep changed nothing. */
  const snapshotB = async () => {
    const events = await stack.events(B, bIds.threadId);
    const item = await (
      await call('GET', `/v1/memory/items/${enc(bIds.namespace)}/${bIds.key}`, secrets['b-all'])
    ).json();
    const threads = await (await call('GET', '/v1/threads', secrets['b-all'])).json();
    const agents = await (await call('GET', '/v1/agents', secrets['b-all'])).json();
    const tools = await (await call('GET', '/v1/tools', secrets['b-all'])).json();
    const schedules = await (await call('GET', '/v1/schedules', secrets['b-all'])).json();
    const revocations = await (await call('GET', '/v1/revocations', secrets['b-all'])).json();
    const waitpoint = (await (await call('GET', `/v1/approvals/${bIds.waitpointId}`, secrets['b-all'])).json()) as {
      status: string;
      decision: unknown;
    };
    return {
      waitpoint: { status: waitpoint.status, decision: waitpoint.decision },
      events: events.map((e) => `${e.version}:${e.type}`),
      item,
      threads,
      agents,
      tools,
      schedules,
      revocations,
    };
  };

  it('has a sweep case for every route the application serves (and the router serves nothing else)', () => {
    const uncovered = routes.map(keyOf).filter((k) => !(k in CASES));
    expect(uncovered).toEqual([]);
    // Cross-check against Express itself: every route it would dispatch is one Nest knows (besides /docs).
    const expressApp = app.getHttpAdapter().getInstance() as {
      router?: { stack: unknown[] };
      _router?: { stack: unknown[] };
    };
    const stackLayers = (expressApp.router ?? expressApp._router)?.stack ?? [];
    const served = stackLayers
      .map((l) => (l as { route?: { path: string; methods: Record<string, boolean> } }).route)
      .filter((r): r is { path: string; methods: Record<string, boolean> } => r !== undefined)
      .flatMap((r) =>
        Object.keys(r.methods)
          .filter((m) => m !== '_all')
          .map((m) => `${m.toUpperCase()} ${r.path}`),
      )
      .filter((k) => !/ \/docs(\/|$)/.test(k));
    expect(new Set(served)).toEqual(new Set(routes.map(keyOf)));
    // And no case is left over for a route that is gone.
    expect(Object.keys(CASES).filter((k) => !routes.some((r) => keyOf(r) === k))).toEqual([]);
  });

  it('answers 401 on every non-public route without a credential', async () => {
    const answers: string[] = [];
    for (const route of routes) {
      const c = CASES[keyOf(route)]!;
      const res = await call(route.method, c.path(bIds), undefined, bodyOf(c, bIds));
      await res.body?.cancel();
      answers.push(`${keyOf(route)} → ${res.status}`);
    }
    expect(answers).toEqual(routes.map((r) => `${keyOf(r)} → ${r.public ? (CASES[keyOf(r)]!.anonymous ?? 200) : 401}`));
  });

  it('answers 403 on every role-restricted route to a credential without the role', async () => {
    const restricted = routes.filter((r) => !r.operator && (r.roles.length > 0 || r.anyRole));
    expect(restricted.length).toBeGreaterThan(10);
    for (const route of restricted) {
      const wrong = ['viewer', 'runner', 'approver', 'admin', 'none'].find((role) => {
        const roles = role === 'none' ? [] : [role];
        return !(
          route.roles.every((r) => roles.includes(r)) &&
          (!route.anyRole || route.anyRole.some((r) => roles.includes(r)))
        );
      })!;
      const c = CASES[keyOf(route)]!;
      const res = await call(route.method, c.path(bIds), secrets[`a-${wrong}`], bodyOf(c, bIds));
      const problem = (await res.json()) as { type?: string };
      expect([keyOf(route), wrong, res.status, problem.type]).toEqual([
        keyOf(route),
        wrong,
        403,
        'urn:ratchet:problem:forbidden',
      ]);
    }
  });

  it("answers tenant B's ids to tenant A exactly as ids that do not exist, and changes nothing of B", async () => {
    const before = await snapshotB();
    // Routes that create something under a name (A's own thread named like B's) go last, so the reads
    // before them see A without any such thread.
    const creates = (r: RouteInfo) => [201, 202].includes(CASES[keyOf(r)]!.crossTenant ?? 404);
    for (const route of [...routes.filter((r) => !creates(r)), ...routes.filter(creates)]) {
      const c = CASES[keyOf(route)]!;
      const expected = c.crossTenant ?? 404;
      const res = await call(route.method, c.path(bIds), secrets['a-all'], bodyOf(c, bIds));
      const text = await readSome(res);
      expect([keyOf(route), res.status]).toEqual([keyOf(route), expected]);
      for (const id of c.mustNotContain?.(bIds) ?? [])
        expect([keyOf(route), text.includes(id)]).toEqual([keyOf(route), false]);
      if (expected === 404) {
        // Indistinguishable from a missing id: same status, type, title and detail.
        const other = await call(route.method, c.path(missing), secrets['a-all'], bodyOf(c, missing));
        const strip = (body: string) => {
          const { instance: _instance, ...rest } = JSON.parse(body) as Record<string, unknown>;
          return rest;
        };
        expect([keyOf(route), other.status, strip(await other.text())]).toEqual([keyOf(route), 404, strip(text)]);
        expect(strip(text)['type']).toBe('urn:ratchet:problem:not-found');
      }
    }
    expect(await snapshotB()).toEqual(before);
  });

  it("rejects a run of tenant A naming tenant B's agent as unknown, exactly like a name nobody has", async () => {
    const outcomeOf = async (agent: string, requestId: string) => {
      const replyTo = `${stack.prefix.subject}.test.bola.${requestId}`;
      const sub = stack.nc.subscribe(replyTo, { max: 1 });
      await stack.publishRequest(A, {
        requestId,
        agent,
        input: [{ role: 'user', content: 'hi' }],
        principal: { id: 'mallory', roles: ['runner'] },
        replyTo,
      });
      for await (const m of sub) return m.json<{ status: string; error?: { code: string; message: string } }>();
      throw new Error('no outcome');
    };
    // (The sweep gave A an agent of its own named like B's first one: B registers another here.)
    const created = await call('POST', '/v1/agents', secrets['b-all'], {
      name: 'b-second',
      model: { provider: 'scripted', script: [{ reply: 'b only' }] },
    });
    expect(created.status).toBe(201);
    const borrowed = await outcomeOf('b-second', 'bola-borrow');
    const nobody = await outcomeOf('b-nobody', 'bola-nobody');
    expect(borrowed).toMatchObject({ status: 'rejected', error: { code: 'agent.unknown' } });
    expect(nobody).toMatchObject({ status: 'rejected', error: { code: 'agent.unknown' } });
    expect(borrowed.error!.message.replace('b-second', '?')).toBe(nobody.error!.message.replace('b-nobody', '?'));
  });

  it('takes an operator credential on deployment routes only, and no tenant credential there', async () => {
    const operatorRoutes = routes.filter((r) => r.operator);
    expect(operatorRoutes.map(keyOf)).toEqual(['GET /v1/deployment/agents', 'POST /v1/deployment/agents']);
    for (const route of routes.filter((r) => !r.public && !r.operator)) {
      const c = CASES[keyOf(route)]!;
      const res = await call(route.method, c.path(bIds), secrets['operator'], bodyOf(c, bIds));
      await readSome(res);
      expect([keyOf(route), res.status]).toEqual([keyOf(route), 403]);
    }
    for (const secret of ['a-all', 'a-claims-operator', 'b-all']) {
      const res = await call(
        'POST',
        '/v1/deployment/agents',
        secrets[secret],
        CASES['POST /v1/deployment/agents']!.body,
      );
      expect([secret, res.status]).toEqual([secret, 403]);
    }
    const shared = await call('POST', '/v1/deployment/agents', secrets['operator'], {
      name: 'concierge',
      model: { provider: 'scripted', script: [{ reply: 'shared' }] },
    });
    expect(shared.status).toBe(201);
    const listed = (await (await call('GET', '/v1/deployment/agents', secrets['operator'])).json()) as {
      agents: { name: string; scope: string }[];
    };
    const names = listed.agents.map((a) => `${a.name}:${a.scope}`);
    expect(names).toEqual(expect.arrayContaining(['concierge:shared', 'demo:shared']));
    expect(names.filter((n) => !n.endsWith(':shared'))).toEqual([]);
    expect(names).not.toContain('b-private:shared');
    // Every tenant is offered it; neither tenant's own agents are among the shared ones.
    for (const secret of ['a-all', 'b-all']) {
      const res = (await (await call('GET', '/v1/agents/concierge', secrets[secret])).json()) as {
        agent: { scope: string };
      };
      expect(res.agent.scope).toBe('shared');
    }
  });
});

function bodyOf(c: Case, ids: Ids): unknown {
  return typeof c.body === 'function' ? (c.body as (ids: Ids) => unknown)(ids) : c.body;
}

/** The body, or (for a stream that stays open) what arrived in the first moments. */
async function readSome(res: Response): Promise<string> {
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res.text();
  const reader = res.body!.getReader();
  const chunk = await reader.read();
  await reader.cancel();
  return new TextDecoder().decode(chunk.value);
}
