import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import type { ToolCallCommand } from '@ratchet/contracts';
import { runTool } from '../run-tool';
import { McpServerConfig } from './mcp.config';
import { McpToolSource } from './mcp.source';

/*
 * MCP servers that misbehave, as real peers on loopback: one that hangs in a tool, one that never
 * answers at all, one that is down, one that answers garbage. Each gives a named failure or an
 * uncertain outcome within its timeout — never a hang — and nothing is offered that cannot be checked.
 */
const logger = { info: () => undefined, warn: () => undefined };
const keys: string[] = [];
const command = (tool: string, args: Record<string, unknown>): ToolCallCommand => ({
  kind: 'tool.call',
  commandId: 'c',
  tenantId: 'acme',
  threadId: 'th',
  runId: 'r',
  step: 1,
  callId: `call-${tool}`,
  tool,
  args: args as ToolCallCommand['args'],
  idempotencyKey: `acme:th:r:1:${tool}`,
  principal: { id: 'u', roles: [] },
});

function mcpServer(): McpServer {
  const server = new McpServer({ name: 'flaky', version: '1.0.0' });
  server.registerTool(
    'hang',
    { description: 'Never finishes.', inputSchema: { n: z.number() } },
    () => new Promise(() => undefined),
  );
  server.registerTool(
    'hang_read',
    { description: 'Never finishes, reads only.', inputSchema: {}, annotations: { readOnlyHint: true } },
    () => new Promise(() => undefined),
  );
  server.registerTool(
    'key',
    { description: 'Echoes the idempotency key.', inputSchema: {}, annotations: { idempotentHint: true } },
    (_args, extra) => {
      keys.push(String(extra._meta?.['idempotencyKey']));
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  );
  server.registerTool(
    'fails',
    { description: 'Reports an error.', inputSchema: {}, annotations: { readOnlyHint: true } },
    () => ({ isError: true, content: [{ type: 'text', text: 'the order system is closed' }] }),
  );
  return server;
}

const servers: (Server | TcpServer)[] = [];
const sockets: Socket[] = [];
const sources: McpToolSource[] = [];
async function listen(server: Server | TcpServer): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}
function source(url: string, timeoutMs = 400): McpToolSource {
  const s = new McpToolSource(McpServerConfig.parse({ name: 'flaky', url, timeoutMs }), logger, {
    retryMs: 60_000,
    startWaitMs: 10_000,
  });
  sources.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(sources.map((s) => s.stop()));
  for (const s of sockets) s.destroy();
  for (const s of servers) {
    if ('closeAllConnections' in s) s.closeAllConnections();
    s.close();
  }
});

describe('MCP servers that misbehave', () => {
  let url: string;
  beforeAll(async () => {
    const port = await listen(
      createServer((req, res) => {
        const server = mcpServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close().then(() => server.close()));
        void server.connect(transport).then(() => transport.handleRequest(req, res));
      }),
    );
    url = `http://127.0.0.1:${port}/mcp`;
  });

  it('passes the idempotency key in _meta, and takes kinds from annotations', async () => {
    // An ordinary call, not a timeout test: room for a machine busy with other suites.
    const s = source(url, 10_000);
    await s.start();
    const kinds = Object.fromEntries(s.offered().map((o) => [o.tool.name, o.tool.kind]));
    expect(kinds).toEqual({
      'flaky.hang': 'at-most-once',
      'flaky.hang_read': 'pure',
      'flaky.key': 'idempotent',
      'flaky.fails': 'pure',
    });
    const tool = s.offered().find((o) => o.tool.name === 'flaky.key')!.tool;
    await expect(runTool(tool, command('flaky.key', {}), logger)).resolves.toMatchObject({ status: 'completed' });
    expect(keys).toEqual(['acme:th:r:1:flaky.key']);
  });

  it('a tool that never answers: at-most-once is uncertain, a read fails with a timeout, both within the timeout', async () => {
    const s = source(url, 300);
    await s.start();
    const get = (name: string) => s.offered().find((o) => o.tool.name === name)!.tool;
    const once = await runTool(get('flaky.hang'), command('flaky.hang', { n: 1 }), logger);
    expect(once).toMatchObject({ status: 'uncertain', reason: expect.stringContaining('may have happened') });
    const read = await runTool(get('flaky.hang_read'), command('flaky.hang_read', {}), logger);
    expect(read).toMatchObject({ status: 'failed', error: { code: 'mcp.timeout' } });
    // Arguments the schema refuses never reach the server.
    const invalid = await runTool(get('flaky.hang'), command('flaky.hang', { n: 'one' }), logger);
    expect(invalid).toMatchObject({ status: 'failed', error: { code: 'invalid_arguments' } });
    // A tool that reports an error is a failure the model reads.
    const failed = await runTool(get('flaky.fails'), command('flaky.fails', {}), logger);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'mcp.tool_error', message: expect.stringContaining('closed') },
    });
  });

  it('a server that never answers, one that is down, one that answers garbage: nothing offered, a named problem', async () => {
    const silentPort = await listen(createTcpServer((socket) => sockets.push(socket)));
    const garbagePort = await listen(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"not":"json-rpc"');
      }),
    );
    const downPort = await listen(createTcpServer());
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    for (const [port, pattern] of [
      [silentPort, /no answer within 400 ms|timed out/i],
      [downPort, /ECONNREFUSED|fetch failed/],
      [garbagePort, /.+/],
    ] as const) {
      const s = source(`http://127.0.0.1:${port}/mcp`);
      await s.start();
      expect(s.offered()).toEqual([]);
      expect(s.problems()).toEqual([
        expect.objectContaining({ code: 'mcp.unavailable', message: expect.stringMatching(pattern) }),
      ]);
    }
  });
});
