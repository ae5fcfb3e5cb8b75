import type { AgentsReply } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

describe('agent definitions through the API', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator'), stack.start('tool-executor')]);
  });
  afterAll(async () => {
    await stack.stop();
  });

  const admin = { id: 'ops', roles: ['admin'] };
  /** A tenant's catalog: `<prefix>.agents.<tenant>.<op>` (the tenant is the subject's). */
  const askAs = async (tenant: string, op: string, body: Record<string, unknown>): Promise<AgentsReply> => {
    const subject = `${stack.prefix.subject}.agents.${tenant}.${op}`;
    const reply = await stack.nc.request(subject, JSON.stringify({ op, ...body }), { timeout: 5000 });
    return reply.json<AgentsReply>();
  };
  const ask = (op: string, body: Record<string, unknown>) => askAs('acme', op, body);
  const askDeployment = async (op: string, body: Record<string, unknown>): Promise<AgentsReply> => {
    const subject = `${stack.prefix.subject}.deployment.agents.${op}`;
    return (await stack.nc.request(subject, JSON.stringify({ op, ...body }), { timeout: 5000 })).json<AgentsReply>();
  };
  const greeter = (answer: string) => ({
    name: 'greeter',
    model: { provider: 'scripted', script: [{ reply: answer }] },
  });

  it('registers versions (only when the content changes) and new runs use the latest', async () => {
    const v1 = await ask('register', { principal: admin, definition: greeter('hello from v1') });
    expect(v1).toMatchObject({ ok: true, agent: { name: 'greeter', version: 1 }, created: true });
    const same = await ask('register', { principal: admin, definition: greeter('hello from v1') });
    expect(same).toMatchObject({ ok: true, agent: { version: 1 }, created: false });
    const v2 = await ask('register', { principal: admin, definition: greeter('hello from v2') });
    expect(v2).toMatchObject({ ok: true, agent: { version: 2 }, created: true });

    await stack.publishRequest('acme', {
      requestId: 'greet',
      agent: 'greeter',
      input: [{ role: 'user', content: 'hi' }],
      principal: { id: 'u', roles: [] },
    });
    const events = await stack.waitFor('acme', threadIdFor('acme', 'greet'), terminal(runIdFor('acme', 'greet')));
    expect(events.at(-1)?.data).toMatchObject({ output: 'hello from v2' });

    const listed = await ask('list', { principal: admin });
    expect(listed.ok && 'agents' in listed && listed.agents.map((a) => `${a.name}@${a.version}:${a.scope}`)).toEqual(
      expect.arrayContaining(['greeter@2:tenant', 'demo@1:shared']),
    );
    expect(await ask('get', { principal: admin, name: 'greeter', version: 1 })).toMatchObject({
      ok: true,
      agent: { version: 1 },
    });
  });

  it('refuses a definition naming every wrong field, an unknown tool, and a caller without admin', async () => {
    const bad = await ask('register', {
      principal: admin,
      definition: { name: 'Bad Name', maxSteps: 0, model: { provider: 'scripted', script: [] } },
    });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid' } });
    const problems = !bad.ok ? (bad.error.problems ?? []).join('\n') : '';
    expect(problems).toMatch(/name:/);
    expect(problems).toMatch(/maxSteps:/);
    expect(problems).toMatch(/model\.script:/);
    const tool = await ask('register', {
      principal: admin,
      definition: { ...greeter('x'), tools: [{ name: 'no.such.tool' }] },
    });
    expect(tool).toMatchObject({
      ok: false,
      error: { code: 'invalid', message: expect.stringContaining('no.such.tool') },
    });
    expect(
      await ask('register', { principal: { id: 'u', roles: ['runner'] }, definition: greeter('x') }),
    ).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await ask('get', { principal: admin, name: 'nobody' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
  });

  it("keeps each tenant's agents to itself; shared agents change only with the operator role", async () => {
    await ask('register', { principal: admin, definition: greeter('acme only') });
    // Another tenant: the name is unknown (get, list), and a run naming it is rejected as unknown.
    expect(await askAs('globex', 'get', { principal: admin, name: 'greeter' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    const globex = await askAs('globex', 'list', { principal: admin });
    expect(globex.ok && 'agents' in globex && globex.agents.map((a) => a.name)).not.toContain('greeter');
    const replyTo = `${stack.prefix.subject}.test.outcome.${Date.now()}`;
    const outcome = stack.nc.subscribe(replyTo, { max: 1 });
    await stack.publishRequest('globex', {
      requestId: 'borrow',
      agent: 'greeter',
      input: [{ role: 'user', content: 'hi' }],
      principal: { id: 'u', roles: [] },
      replyTo,
    });
    for await (const m of outcome) {
      expect(m.json()).toMatchObject({ status: 'rejected', error: { code: 'agent.unknown' } });
    }
    // Globex registering the same name makes its own agent; acme's stays as it was.
    expect(await askAs('globex', 'register', { principal: admin, definition: greeter('globex') })).toMatchObject({
      ok: true,
      agent: { name: 'greeter', version: 1, scope: 'tenant' },
    });
    expect(await ask('get', { principal: admin, name: 'greeter' })).toMatchObject({
      ok: true,
      agent: { definition: { model: { script: [{ reply: 'acme only' }] } } },
    });
    // Shared agents: a tenant admin cannot change them, an operator can; tenants then see the new version.
    expect(await askDeployment('register', { principal: admin, definition: greeter('x') })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    const shared = { name: 'concierge', model: { provider: 'scripted', script: [{ reply: 'shared' }] } };
    expect(
      await askDeployment('register', { principal: { id: 'ops', roles: ['operator'] }, definition: shared }),
    ).toMatchObject({ ok: true, agent: { name: 'concierge', scope: 'shared' }, created: true });
    expect(await askAs('globex', 'get', { principal: admin, name: 'concierge' })).toMatchObject({
      ok: true,
      agent: { scope: 'shared' },
    });
    // A tenant cannot take a shared agent's name.
    expect(await ask('register', { principal: admin, definition: { ...shared, instructions: 'mine' } })).toMatchObject({
      ok: false,
      error: { code: 'conflict' },
    });
  });
});
