import { RatchetClient } from '@ratchet/client';
import { terminal, TestStack } from './stack';

describe('the TypeScript client', () => {
  let stack: TestStack;
  let client: RatchetClient;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator'), stack.start('tool-executor')]);
    client = new RatchetClient(stack.nc, {
      tenant: 'acme',
      prefix: stack.prefix.subject,
      streamPrefix: stack.prefix.stream,
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const request = (requestId: string) => ({
    requestId,
    agent: 'demo',
    input: [{ role: 'user' as const, content: 'What is the weather in Lima?' }],
    principal: { id: 'svc:orders', roles: ['runner'] },
  });

  it('starts a run and awaits its outcome', async () => {
    const outcome = await client.run(request('client-run-1'), { timeoutMs: 30_000 });
    expect(outcome).toMatchObject({
      status: 'completed',
      runId: client.idsOf('client-run-1').runId,
      output: expect.stringContaining('Lima'),
    });
  });

  it('streams a thread’s events in order until the run ends', async () => {
    const started = await client.start(request('client-run-2'));
    const seen: string[] = [];
    for await (const event of client.events(started.threadId, { untilRunEnds: started.runId }))
      seen.push(`${event.version}:${event.type}`);
    const stored = await stack.waitFor('acme', started.threadId, terminal(started.runId));
    expect(seen).toEqual(stored.map((e) => `${e.version}:${e.type}`));
  });

  it('refuses an invalid request before publishing, naming the field', async () => {
    await expect(client.start({ ...request('bad'), input: [] })).rejects.toThrow(/input/);
  });
});
