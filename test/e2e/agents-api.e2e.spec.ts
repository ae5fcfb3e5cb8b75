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
  const ask = async (op: string, body: Record<string, unknown>): Promise<AgentsReply> => {
    const reply = await stack.nc.request(`${stack.prefix.subject}.agents.${op}`, JSON.stringify({ op, ...body }), {
      timeout: 5000,
    });
    return reply.json<AgentsReply>();
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
    expect(listed.ok && 'agents' in listed && listed.agents.map((a) => `${a.name}@${a.version}`)).toEqual(
      expect.arrayContaining(['greeter@2', 'demo@1']),
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
});
