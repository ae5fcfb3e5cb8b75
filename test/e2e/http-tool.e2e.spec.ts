import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

/** The agent's per-tool settings travel from its pinned definition to the executor with each call. */
describe('http.request with a per-agent host allowlist', () => {
  let stack: TestStack;
  let server: Server;
  // What reached the paths the agent was told to fetch (anything else on this port is not the agent's:
  // on a busy machine another test's readiness probe can land on a port the OS handed out twice).
  const seen: Array<{ key: string | undefined; body: string }> = [];
  let port = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/orders' || req.url === '/other')
          seen.push({ key: req.headers['idempotency-key'] as string | undefined, body });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ received: body }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: path.resolve(__dirname, '../agents/http') }),
      // The test's server is on loopback: only the deployment can allow that, by address.
      stack.start('tool-executor', { HTTP_TOOL_ALLOW_INTERNAL: '127.0.0.1' }),
    ]);
  });
  afterAll(async () => {
    await stack.stop();
    await new Promise((r) => server.close(r));
  });

  it('reaches an allowed host with the idempotency key and refuses another host', async () => {
    await stack.publishRequest('acme', {
      requestId: 'fetch-1',
      agent: 'fetcher',
      input: [{ role: 'user', content: `fetch http://127.0.0.1:${port}/orders and http://localhost:${port}/other` }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const events = await stack.waitFor('acme', threadIdFor('acme', 'fetch-1'), terminal(runIdFor('acme', 'fetch-1')));
    const completed = events.find((e) => e.type === 'tool.completed');
    const failed = events.find((e) => e.type === 'tool.failed');
    expect(JSON.stringify(completed?.data)).toContain('received');
    expect(failed?.data).toMatchObject({ error: { message: expect.stringContaining('allowHosts') } });
    expect(seen).toHaveLength(1);
    const requested = events.find(
      (e) =>
        e.type === 'tool.requested' &&
        (e.data as { callId: string }).callId === (completed?.data as { callId: string }).callId,
    );
    expect(seen[0]).toEqual({ key: (requested?.data as { idempotencyKey: string }).idempotencyKey, body: 'hello' });
  });

  it('refuses an address inside the deployment that the agent allows but the deployment does not', async () => {
    const before = seen.length;
    await stack.publishRequest('acme', {
      requestId: 'fetch-inside',
      agent: 'inside-fetcher',
      input: [
        { role: 'user', content: `fetch http://[::1]:${port}/orders and http://169.254.169.254/latest/meta-data/` },
      ],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const events = await stack.waitFor(
      'acme',
      threadIdFor('acme', 'fetch-inside'),
      terminal(runIdFor('acme', 'fetch-inside')),
    );
    const failed = events.filter((e) => e.type === 'tool.failed').map((e) => e.data);
    expect(failed).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: 'http.address_not_allowed' }) }),
      expect.objectContaining({ error: expect.objectContaining({ code: 'http.address_not_allowed' }) }),
    ]);
    expect(seen.length).toBe(before);
  });
});
