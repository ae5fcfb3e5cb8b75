import type { AgentsReply, ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { freePort } from '@ratchet/testing';
import { terminal, TestStack } from './stack';
import { answer, catalogOf, EVERYTHING, FakeModel, ToolProcess, toolCalls } from './tool-processes';

/*
 * Every way to bring a tool, in one run of one agent: a tool module (and its local tool), a remote
 * tool service in TypeScript, one in Python (stdlib only, no Ratchet code), an MCP server written
 * with the SDK and the published server-everything — each a real process. The model is an
 * OpenAI-compatible server on loopback that records what it was sent: it must receive each tool's
 * real schema.
 */
const TENANT = 'acme';
const CALLS = [
  { id: 'c-quote', tool: 'shop.quote', args: { item: 'tea', quantity: 2 } },
  { id: 'c-vat', tool: 'shop.vat', args: { cents: 900 } },
  { id: 'c-ticket', tool: 'crm.create_ticket', args: { title: 'Printer on fire', priority: 'high' } },
  { id: 'c-units', tool: 'units.convert', args: { value: 10, from: 'km', to: 'mi' } },
  { id: 'c-order', tool: 'orders.lookup', args: { orderId: 'o-1' } },
  { id: 'c-sum', tool: 'everything.get-sum', args: { a: 2, b: 3 } },
];

describe('tools from every source in one run', () => {
  let stack: TestStack;
  const processes: ToolProcess[] = [];
  const model = new FakeModel((request) =>
    request.body.messages.some((m) => m.role === 'tool') ? answer('all six answered') : toolCalls(CALLS),
  );

  beforeAll(async () => {
    await model.start();
    stack = await TestStack.create();
    const mcpPort = await freePort();
    const env = { NATS_URL: stack.env['NATS_URL']!, RATCHET_SUBJECT_PREFIX: stack.prefix.subject };
    processes.push(
      ToolProcess.ts('crm (ts)', 'examples/remote-tool-service/main.ts', env),
      // Bound to tenant acme by its subjects: another tenant never sees it.
      ToolProcess.spawn('units (python)', 'python3', ['examples/remote-tool-service-python/tool_service.py'], {
        ...env,
        RATCHET_TENANT: TENANT,
      }),
      ToolProcess.ts('orders (mcp)', 'examples/mcp-server/server.ts', { MCP_PORT: String(mcpPort) }),
    );
    await Promise.all(processes.map((p) => p.waitForLog('serving').catch(() => p.waitForLog('MCP server on'))));
    const modules = './examples/tool-module/shop.tools.ts';
    await stack.start('tool-executor', {
      TOOL_MODULES: modules,
      REMOTE_DISCOVERY_INTERVAL_MS: '500',
      MCP_SERVERS: JSON.stringify([
        { name: 'orders', url: `http://127.0.0.1:${mcpPort}/mcp` },
        { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] },
      ]),
    });
    await stack.start('orchestrator', { TOOL_MODULES: modules, FAKE_MODEL_KEY: 'sk-test' });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(processes.map((p) => p.kill()));
    await model.stop();
  });

  it("offers each tool with its source's own schema, and one run calls all of them", async () => {
    const catalog = await catalogOf(stack.nc, stack.prefix.subject, TENANT, (c) =>
      CALLS.every((call) => c.tools.some((t) => t.name === call.tool)),
    );
    const source = (name: string) => catalog.tools.find((t) => t.name === name)?.source;
    expect(source('shop.quote')).toBe('module:./examples/tool-module/shop.tools.ts');
    expect(source('crm.create_ticket')).toBe(`remote:${stack.prefix.subject}.toolsvc.crm.create_ticket`);
    expect(source('units.convert')).toBe(`remote:${stack.prefix.subject}.tenants.${TENANT}.toolsvc.units.convert`);
    expect(source('orders.lookup')).toBe('mcp:orders');
    expect(source('everything.get-sum')).toBe('mcp:everything');
    // Kinds: declared by the module and the services, from annotations for MCP tools.
    const kind = (name: string) => catalog.tools.find((t) => t.name === name)?.kind;
    expect([kind('crm.create_ticket'), kind('units.convert'), kind('orders.lookup'), kind('orders.refund')]).toEqual([
      'idempotent',
      'pure',
      'pure',
      'at-most-once',
    ]);
    expect(kind('orders.set_status')).toBe('idempotent');

    const registered = await stack.nc.request(
      `${stack.prefix.subject}.agents.${TENANT}.register`,
      JSON.stringify({
        op: 'register',
        principal: { id: 'ops', roles: ['admin'] },
        definition: {
          name: 'toolbox',
          model: { provider: 'openai', name: 'fake-model', baseUrl: model.baseUrl, apiKeyEnv: 'FAKE_MODEL_KEY' },
          tools: CALLS.map((c) => ({ name: c.tool })),
        },
      }),
      { timeout: 10_000 },
    );
    expect(registered.json<AgentsReply>()).toMatchObject({ ok: true, agent: { name: 'toolbox', scope: 'tenant' } });

    const requestId = 'every-source';
    await stack.publishRequest(TENANT, {
      requestId,
      agent: 'toolbox',
      input: [{ role: 'user', content: 'use every tool' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const events = await stack.waitFor(
      TENANT,
      threadIdFor(TENANT, requestId),
      terminal(runIdFor(TENANT, requestId)),
      90_000,
    );
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { output: 'all six answered' } });

    // What the model was sent: each tool's own schema, as its source described it.
    const sent = new Map(
      model.seen[0]!.body.tools!.map((t) => [t.function.name.replaceAll('__', '.'), t.function.parameters]),
    );
    expect(sent.get('crm.create_ticket')).toEqual({
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200, description: 'One-line summary' },
        priority: { type: 'string', enum: ['low', 'normal', 'high'], default: 'normal' },
      },
      required: ['title'],
      additionalProperties: false,
    });
    expect(sent.get('units.convert')).toMatchObject({
      properties: { from: { enum: ['km', 'mi', 'kg', 'lb'] }, value: { type: 'number' } },
      required: ['value', 'from', 'to'],
    });
    expect(sent.get('orders.lookup')).toMatchObject({
      type: 'object',
      properties: { orderId: { type: 'string', description: 'Order id, e.g. o-1' } },
      required: ['orderId'],
    });
    expect(sent.get('everything.get-sum')).toMatchObject({
      properties: { a: { type: 'number', description: 'First number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
    expect(sent.get('shop.quote')).toMatchObject({
      properties: { item: { enum: ['tea', 'coffee', 'cake'] }, quantity: { type: 'integer' } },
    });
    expect(sent.get('shop.vat')).toMatchObject({ properties: { cents: { type: 'integer' } } });

    const results = new Map(
      events
        .filter((e): e is Extract<ThreadEvent, { type: 'tool.completed' }> => e.type === 'tool.completed')
        .map((e) => [e.data.callId, e.data.result]),
    );
    expect(events.filter((e) => e.type === 'tool.failed')).toEqual([]);
    expect(results.get('c-quote')).toEqual({ item: 'tea', quantity: 2, cents: 900 });
    expect(results.get('c-vat')).toEqual({ vat: 180 });
    expect(results.get('c-ticket')).toEqual({ ticketId: 'T-1', title: 'Printer on fire', priority: 'high' });
    expect(results.get('c-units')).toEqual({ value: 6.21371, unit: 'mi' });
    expect(results.get('c-order')).toMatchObject({ structuredContent: { orderId: 'o-1', status: 'paid' } });
    expect(JSON.stringify(results.get('c-sum'))).toContain('5');
  }, 180_000);

  it("keeps a tenant's tool services to that tenant", async () => {
    // units.convert is served on acme's subjects: globex's catalog does not list it ...
    const globex = await catalogOf(stack.nc, stack.prefix.subject, 'globex', (c) =>
      c.tools.some((t) => t.name === 'crm.create_ticket'),
    );
    expect(globex.tools.map((t) => t.name)).not.toContain('units.convert');
    // ... an agent of globex cannot list it ...
    const refused = await stack.nc.request(
      `${stack.prefix.subject}.agents.globex.register`,
      JSON.stringify({
        op: 'register',
        principal: { id: 'ops', roles: ['admin'] },
        definition: {
          name: 'borrower',
          model: { provider: 'scripted', script: [{ reply: 'x' }] },
          tools: [{ name: 'units.convert' }],
        },
      }),
      { timeout: 10_000 },
    );
    expect(refused.json<AgentsReply>()).toMatchObject({
      ok: false,
      error: { code: 'invalid', message: expect.stringContaining('unknown tool "units.convert"') },
    });
    // ... and a call of it for globex (a forged command on globex's tool subject) never reaches the service.
    const command = {
      kind: 'tool.call',
      commandId: 'forged-1',
      tenantId: 'globex',
      threadId: 'th-forged',
      runId: 'run-forged',
      step: 1,
      callId: 'call-1',
      tool: 'notes.append',
      args: { text: 'from globex' },
      idempotencyKey: 'globex:th-forged:run-forged:1:call-1',
      principal: { id: 'mallory', roles: ['runner'] },
    };
    const inbox = stack.nc.subscribe(`${stack.prefix.subject}.inbox.globex.th-forged`, { max: 1 });
    await stack.nc
      .jetstream()
      .publish(`${stack.prefix.subject}.cmd.tool.globex`, JSON.stringify(command), { msgID: command.commandId });
    for await (const m of inbox) {
      expect(m.json()).toMatchObject({
        kind: 'tool.result',
        outcome: { status: 'failed', error: { code: 'unknown_tool' } },
      });
    }
  }, 60_000);
});
