import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { ApiKeyRepository, natsServersAndAuth, openServiceDatabase, type Database } from '@ratchet/adapters';
import { approvalsSubjects, memorySubject, subjects, threadsSubject, type ThreadEvent } from '@ratchet/contracts';
import { EffectService, freePort } from '@ratchet/testing';
import { TestStack } from '../e2e/stack';
import { accountUsers, parseNatsConf } from './nats-conf';

/*
 * The NATS users and permissions Ratchet ships (deploy/nats/nats-server.conf, the same accounts block as
 * the Kubernetes ConfigMap), enforced by a real nats-server: each of the five services connects as its own
 * user, and a run that touches every service — over HTTP through the gateway, four parallel tool calls on
 * the executor (one waits for an approver), durable memory, the SSE stream, the catalog and listing
 * routes — completes, with not one permissions violation in the server's log.
 */

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '../..');
const CONF = readFileSync(path.join(ROOT, 'deploy/nats/nats-server.conf'), 'utf8');
const TENANT = 'acme';
/** The test's own client (it reads the log and cleans the streams up): not one of the users under test. */
const OBSERVER = { user: 'test-observer', password: 'observer' };
/** A second tenant's external publisher: the shipped `acme-publisher` entry copied for `globex`, as deploy.md says to. */
const OTHER_TENANT = 'globex';
const OTHER_PUBLISHER = { user: `${OTHER_TENANT}-publisher`, password: 'other-publisher' };
const SERVICES = ['gateway', 'orchestrator', 'tool-executor', 'approvals', 'memory'] as const;
const password = (service: string) => `pw-${service}`;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** deploy's configuration on a loopback port and a temp store, plus the observer user. */
function serverConf(port: number, storeDir: string, version: [number, number]): string {
  let conf = CONF.replace(/^listen: .*$/m, `listen: 127.0.0.1:${port}`)
    .replace(/^http: .*$/m, '')
    .replace(/^(\s*)store_dir: .*$/m, `$1store_dir: ${JSON.stringify(storeDir)}`);
  // `sync_interval` exists from nats-server 2.10 on.
  if (version[0] === 2 && version[1] < 10) conf = conf.replace(/^\s*sync_interval: always\s*$/m, '');
  const observer = `{ user: "${OBSERVER.user}", password: "${OBSERVER.password}", permissions: { publish: ">", subscribe: ">" } }`;
  const shipped = accountUsers(parseNatsConf(CONF), 'RATCHET').find((u) => u.user === 'acme-publisher');
  if (!shipped) throw new Error('deploy/nats ships no acme-publisher');
  const forOther = (list: string[]) => JSON.stringify(list.map((x) => x.replace(/\.acme(\.|$)/, `.${OTHER_TENANT}$1`)));
  const other = `{ user: "${OTHER_PUBLISHER.user}", password: "${OTHER_PUBLISHER.password}", permissions: { publish: { allow: ${forOther(shipped.publish)} }, subscribe: { allow: ${forOther(shipped.subscribe)} } } }`;
  return conf.replace(/users: \[/, `users: [\n      ${observer}\n      ${other}`);
}

describe('the NATS users and permissions of deploy/nats, enforced', () => {
  const version = /v(\d+)\.(\d+)/.exec(spawnSync('nats-server', ['--version'], { encoding: 'utf8' }).stdout ?? '');
  const effects = new EffectService();
  let server: ChildProcess;
  let serverLog = '';
  let dir = '';
  let port = 0;
  let stack: TestStack;
  let gatewayDb: Database;
  let gatewayUrl = '';
  const keys = { runner: '', approver: '' };

  const userUrl = (user: string, pass: string) => `nats://${user}:${pass}@127.0.0.1:${port}`;
  const http = async (method: string, url: string, key: string, body?: unknown) => {
    const res = await fetch(`${gatewayUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };

  beforeAll(async () => {
    if (!version) throw new Error('nats-server is not installed');
    await effects.start();
    // The users under test are the ones deploy ships: every service has one, with a password variable.
    const users = accountUsers(parseNatsConf(CONF), 'RATCHET');
    for (const s of SERVICES) expect(users.map((u) => u.user)).toContain(`ratchet-${s}`);
    dir = mkdtempSync(path.join(tmpdir(), 'ratchet-nats-perms-'));
    port = await freePort();
    writeFileSync(
      path.join(dir, 'nats.conf'),
      serverConf(port, path.join(dir, 'js'), [Number(version[1]), Number(version[2])]),
    );
    const env: Record<string, string> = {};
    for (const u of users) env[u.password.slice(1)] = u.user.startsWith('ratchet-') ? password(u.user.slice(8)) : 'x';
    server = spawn('nats-server', ['-c', path.join(dir, 'nats.conf')], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (d: Buffer) => (serverLog += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (serverLog += d.toString()));
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        await (
          await connect({ ...natsServersAndAuth(userUrl(OBSERVER.user, OBSERVER.password)), timeout: 500 })
        ).close();
        break;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`nats-server did not start: ${String(error)}\n${serverLog}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    // The deployment's own prefixes: the permissions name `ratchet.…` subjects and `RATCHET_…` streams.
    stack = await TestStack.create({
      natsUrl: userUrl(OBSERVER.user, OBSERVER.password),
      prefix: { subject: 'ratchet', stream: 'RATCHET' },
    });
    gatewayDb = await openServiceDatabase(stack.testDb.url, 'gateway');
    const repo = new ApiKeyRepository(gatewayDb.sql);
    keys.runner = (await repo.create({ tenantId: TENANT, name: 'runner', roles: ['runner', 'viewer'] })).secret;
    keys.approver = (await repo.create({ tenantId: TENANT, name: 'approver', roles: ['approver', 'viewer'] })).secret;
    const as = (service: string) => ({ NATS_URL: userUrl(`ratchet-${service}`, password(service)) });
    await Promise.all([
      stack.start('orchestrator', {
        ...as('orchestrator'),
        AGENTS_DIR: path.resolve(ROOT, 'test/chaos/agents'),
        LOCAL_TOOLS: 'false',
      }),
      stack.start('tool-executor', { ...as('tool-executor'), RATCHET_DEMO_EFFECT_URL: effects.url }),
      stack.start('approvals', as('approvals')),
      stack.start('memory', as('memory')),
    ]);
    const gateway = await stack.start('gateway', as('gateway'));
    gatewayUrl = `http://127.0.0.1:${gateway.port}`;
  });

  afterAll(async () => {
    await stack?.stop();
    await gatewayDb?.close();
    await effects.stop().catch(() => undefined);
    server?.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a run through every service completes, and the server logs no permissions violation', async () => {
    const started = await http('POST', '/v1/runs', keys.runner, { agent: 'chaos', input: 'item-perms-1' });
    expect(started.status).toBe(202);
    const { runId, threadId } = started.body as { runId: string; threadId: string };

    // The live stream (events and tokens, subscribed by the gateway) answers with the run's events.
    const stream = await fetch(`${gatewayUrl}/v1/threads/${threadId}/stream`, {
      headers: { authorization: `Bearer ${keys.runner}` },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('event:');
    await reader.cancel();

    // The upsert waits for an approver: another principal grants it over HTTP (gateway → approvals).
    let approvalId: string | undefined;
    const deadline = Date.now() + 60_000;
    while (!approvalId && Date.now() < deadline) {
      const res = await http('GET', `/v1/approvals?status=pending&threadId=${threadId}`, keys.approver);
      expect(res.status).toBe(200);
      approvalId = (res.body as { approvals: Array<{ id: string }> }).approvals[0]?.id;
      if (!approvalId) await new Promise((r) => setTimeout(r, 200));
    }
    expect(approvalId).toBeDefined();
    const decided = await http('POST', `/v1/approvals/${approvalId}/decision`, keys.approver, {
      decision: 'approve',
      reason: 'checked',
    });
    expect(decided.status).toBe(200);

    const events = await stack.waitFor(TENANT, threadId, (ev: ThreadEvent[]) =>
      ev.some((e) => e.runId === runId && TERMINAL.has(e.type)),
    );
    expect(events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)).toEqual(['run.completed']);
    expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(5);

    // The routes the gateway answers by asking another service over NATS.
    for (const route of [
      `/v1/runs/${runId}`,
      `/v1/threads/${threadId}`,
      `/v1/threads/${threadId}/events`,
      '/v1/agents',
      '/v1/tools',
      '/v1/memory/items?namespace=chaos',
      '/v1/schedules',
      '/v1/webhooks/deliveries',
      '/v1/usage?by=day',
    ]) {
      const res = await http('GET', route, keys.runner);
      expect([route, res.status]).toEqual([route, 200]);
    }
    expect(serverLog).not.toMatch(/Violation/);
  });

  it("a tenant's external publisher reaches none of another tenant's subjects, publishing or subscribing; only its own requests", async () => {
    const s = subjects('ratchet');
    const a = approvalsSubjects('ratchet');
    const A = TENANT;
    // Every subject that carries tenant A (and the services' shared request subjects), as the services name them.
    const publishTo = [
      s.requests(A),
      s.inbox(A, 't1'),
      s.modelCommands(A),
      s.toolCommands(A),
      s.approvalCommands(A),
      s.controlCommands(A),
      s.webhookCommands(A),
      s.runStops(A, 't1'),
      s.tokens(A, 't1'),
      s.events(A, 't1'),
      s.tenantToolService(A, 'units.convert'),
      s.agents(A, 'list'),
      s.tools(A, 'list'),
      s.schedules(A, 'list'),
      s.webhooks(A, 'deliveries'),
      s.waitpoints(A, 'complete'),
      threadsSubject('ratchet', A, 'list'),
      memorySubject('ratchet', A, 'search'),
      memorySubject('ratchet', A, 'put'),
      a.api,
      a.principalsCheck,
    ];
    const subscribeTo = [
      s.requests(A),
      `ratchet.inbox.${A}.>`,
      `ratchet.cmd.*.${A}`,
      `ratchet.stop.${A}.>`,
      s.tokensOfTenant(A),
      s.eventsOfTenant(A),
      `ratchet.tenants.${A}.toolsvc.>`,
      `ratchet.agents.${A}.*`,
      `ratchet.tools.${A}.*`,
      `ratchet.schedules.${A}.*`,
      `ratchet.webhooks.${A}.*`,
      `ratchet.waitpoints.${A}.*`,
      `ratchet.threads.${A}.*`,
      `ratchet.memory.${A}.*`,
      a.principalsCheck,
    ];
    // The observer sees everything on the account: nothing B sends may arrive anywhere.
    const observer = await connect(natsServersAndAuth(userUrl(OBSERVER.user, OBSERVER.password)));
    const marker = 'bola-from-other-tenant';
    const arrived: string[] = [];
    observer.subscribe('ratchet.>', {
      callback: (_e, m) => {
        if (new TextDecoder().decode(m.data).includes(marker)) arrived.push(m.subject);
      },
    });
    await observer.flush();

    const b = await connect(natsServersAndAuth(userUrl(OTHER_PUBLISHER.user, OTHER_PUBLISHER.password)));
    try {
      for (const subject of publishTo) b.publish(subject, JSON.stringify({ marker, tenantId: A }));
      for (const subject of subscribeTo) b.subscribe(subject, { callback: () => undefined });
      await b.flush().catch(() => undefined);
      const refused = (kind: string, subject: string) =>
        serverLog.includes(`${kind} Violation - User "${OTHER_PUBLISHER.user}", Subject "${subject}"`);
      const deadline = Date.now() + 10_000;
      const missing = () => [
        ...publishTo.filter((x) => !refused('Publish', x)).map((x) => `publish ${x}`),
        ...subscribeTo.filter((x) => !refused('Subscription', x)).map((x) => `subscribe ${x}`),
      ];
      while (missing().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(missing()).toEqual([]);
      await observer.flush();
      expect(arrived).toEqual([]);

      // Its own tenant's request subject is its to publish on (JetStream acknowledges it), and only that.
      const ack = await b.jetstream().publish(s.requests(OTHER_TENANT), JSON.stringify({ marker: 'own tenant' }));
      expect(ack.stream).toBe('RATCHET_REQUESTS');
    } finally {
      await b.close().catch(() => undefined);
      await observer.close();
    }
    // And the shipped publisher of tenant A, the other way round.
    const acme = await connect(natsServersAndAuth(userUrl('acme-publisher', 'x')));
    // It may complete its own tenant's waitpoints: the approvals service answers (this id is unknown).
    const own = await acme.request(
      s.waitpoints('acme', 'complete'),
      JSON.stringify({ waitpointId: 'wp_none', result: {} }),
      {
        timeout: 10_000,
      },
    );
    expect(JSON.parse(new TextDecoder().decode(own.data))).toMatchObject({ ok: false, error: { code: 'not_found' } });
    acme.publish(s.requests(OTHER_TENANT), JSON.stringify({ marker }));
    await acme.flush().catch(() => undefined);
    await acme.close().catch(() => undefined);
    const deadline = Date.now() + 10_000;
    const refusedAcme = () =>
      serverLog.includes(`Publish Violation - User "acme-publisher", Subject "${s.requests(OTHER_TENANT)}"`);
    while (!refusedAcme() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(refusedAcme()).toBe(true);
  });
});
