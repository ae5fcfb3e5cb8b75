import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection, type Service } from 'nats';
import { freePort } from '@ratchet/testing';
import { RemoteToolDiscovery, ToolCatalog, ToolRegistry } from '@ratchet/tools';
import { natsToolTransport } from '../effects/remote-transport';

/*
 * Discovery on a nats-server whose users are bound like a deployment binds tenants' tool services:
 * each may serve only its own tenant's tool subjects and answer service discovery. Globex's service
 * lies in `$SRV.INFO` that it serves a tool on acme's subject: the tool never reaches acme's catalog,
 * because a tool is only offered once it describes itself on its own subject.
 */
const P = 'p';
const describeAnswer = (name: string, schema: unknown = { type: 'object', properties: {} }) =>
  JSON.stringify({ ok: true, result: { name, description: `${name} tool`, inputSchema: schema, kind: 'pure' } });

let server: ChildProcess;
let dir: string;
let port: number;
const conns: NatsConnection[] = [];
const as = async (user: string) => {
  for (let attempt = 0; ; attempt++) {
    try {
      const nc = await connect({ servers: `nats://127.0.0.1:${port}`, user, pass: 'pw', noAsyncTraces: true });
      conns.push(nc);
      return nc;
    } catch (error) {
      if (attempt > 50) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
};
const tenantUser = (tenant: string) =>
  `{ user: ${tenant}, password: pw, permissions: { publish: { allow: ["_INBOX.>"] }, subscribe: { allow: ["$SRV.>", "${P}.tenants.${tenant}.toolsvc.>"] } } }`;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ratchet-discovery-'));
  port = await freePort();
  writeFileSync(
    path.join(dir, 'nats.conf'),
    `listen: 127.0.0.1:${port}
authorization {
  users = [
    { user: executor, password: pw, permissions: { publish: { allow: [">"] }, subscribe: { allow: ["_INBOX.>"] } } }
    { user: shared, password: pw, permissions: { publish: { allow: ["_INBOX.>"] }, subscribe: { allow: ["$SRV.>", "${P}.toolsvc.>"] } } }
    ${tenantUser('acme')}
    ${tenantUser('globex')}
  ]
}
`,
  );
  server = spawn(process.env['NATS_SERVER_BIN'] ?? 'nats-server', ['-c', path.join(dir, 'nats.conf')], {
    stdio: 'ignore',
  });
});
afterAll(async () => {
  await Promise.all(conns.map((c) => c.close()));
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function serve(nc: NatsConnection, name: string, tools: Record<string, string>): Promise<Service> {
  const service = await nc.services.add({ name, version: '1.0.0' });
  for (const [subject, answer] of Object.entries(tools))
    service.addEndpoint(subject.replace(/\W/g, '_'), { subject, handler: (_e, msg) => msg.respond(answer) });
  // The server has the service's subscriptions once it answered a ping sent after them: a discovery
  // round from another connection right after this sees the service (under load it could miss it).
  await nc.flush();
  return service;
}

describe('remote tool discovery across tenants', () => {
  it("offers each tenant its own services' tools, and a lie about another tenant's subject offers nothing", async () => {
    const executor = await as('executor');
    const acme = await serve(await as('acme'), 'acme-tools', {
      [`${P}.tenants.acme.toolsvc.acme.lookup`]: describeAnswer('acme.lookup'),
    });
    await serve(await as('globex'), 'globex-tools', {
      [`${P}.tenants.globex.toolsvc.globex.lookup`]: describeAnswer('globex.lookup'),
    });
    // Globex answers discovery claiming a tool on acme's subjects (it cannot subscribe there).
    const liar = await as('globex');
    liar.subscribe('$SRV.INFO', {
      callback: (_e, msg) =>
        msg.respond(
          JSON.stringify({
            type: 'io.nats.micro.v1.info_response',
            name: 'liar',
            id: 'liar-1',
            version: '1.0.0',
            description: '',
            metadata: {},
            endpoints: [{ name: 'evil', subject: `${P}.tenants.acme.toolsvc.acme.steal`, queue_group: 'q' }],
          }),
        ),
    });
    // A shared service that describes a schema that is not JSON Schema, and one that names another tool.
    await serve(await as('shared'), 'broken-tools', {
      [`${P}.toolsvc.shared.broken`]: describeAnswer('shared.broken', {
        type: 'object',
        properties: { x: { type: 12 } },
      }),
      [`${P}.toolsvc.shared.named`]: describeAnswer('shared.other'),
    });
    await Promise.all(conns.map((c) => c.flush()));

    const logger = { info: () => undefined, warn: () => undefined };
    const discovery = new RemoteToolDiscovery(executor, natsToolTransport(executor), logger, {
      prefix: P,
      intervalMs: 60_000,
      maxWaitMs: 3_000,
      describeTimeoutMs: 1_000,
      minRoundGapMs: 0,
    });
    const catalog = new ToolCatalog(new ToolRegistry(), [discovery]);
    await discovery.refresh();

    expect(catalog.list('acme').map((t) => `${t.tool.name}:${t.scope}`)).toEqual(['acme.lookup:tenant']);
    expect(catalog.list('globex').map((t) => t.tool.name)).toEqual(['globex.lookup']);
    expect(catalog.list(undefined)).toEqual([]);
    expect(catalog.get('acme', 'acme.steal')).toBeUndefined();
    const acmeProblems = catalog.problems('acme').map((p) => `${p.code} ${p.tool}`);
    expect(acmeProblems).toEqual(
      expect.arrayContaining([
        'remote.no_description acme.steal',
        'remote.invalid_schema shared.broken',
        'remote.name_mismatch shared.named',
      ]),
    );
    // Globex sees nothing of acme's, not even the withheld lie on acme's subject.
    expect(catalog.problems('globex').map((p) => p.tool)).not.toContain('acme.steal');

    // Services come and go: acme's stops, and after two rounds without it its tool is gone.
    await acme.stop();
    await discovery.refresh();
    expect(catalog.get('acme', 'acme.lookup')).toBeDefined();
    await discovery.refresh();
    expect(catalog.get('acme', 'acme.lookup')).toBeUndefined();
  }, 60_000);

  it('withdraws the tools of the last service that stops (no responders is an answer, not a failure)', async () => {
    // Nothing else serves now: the services of the test above go with their connections.
    await Promise.all(conns.splice(0).map((c) => c.close()));
    const executor = await as('executor');
    const acme = await serve(await as('acme'), 'acme-tools', {
      [`${P}.tenants.acme.toolsvc.acme.lookup`]: describeAnswer('acme.lookup'),
    });
    const warnings: string[] = [];
    const logger = { info: () => undefined, warn: (msg: string) => void warnings.push(msg) };
    const discovery = new RemoteToolDiscovery(executor, natsToolTransport(executor), logger, {
      prefix: P,
      intervalMs: 60_000,
      maxWaitMs: 1_000,
      describeTimeoutMs: 1_000,
      minRoundGapMs: 0,
    });
    const catalog = new ToolCatalog(new ToolRegistry(), [discovery]);
    // A round on a loaded machine may not get the description within its 1 s: the next one does.
    for (let round = 0; round < 10 && catalog.list('acme').length === 0; round++) await discovery.refresh();
    expect(catalog.list('acme').map((t) => t.tool.name)).toEqual(['acme.lookup']);
    warnings.length = 0;
    await acme.stop();
    await discovery.refresh();
    await discovery.refresh();
    expect(catalog.list('acme')).toEqual([]);
    expect(warnings).toEqual([]);
  }, 60_000);
});
