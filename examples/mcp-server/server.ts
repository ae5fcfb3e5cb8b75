/**
 * An MCP server written with the official SDK (`@modelcontextprotocol/sdk`), serving three tools whose
 * annotations tell Ratchet their kind: `lookup` (readOnlyHint → pure), `set_status`
 * (idempotentHint → idempotent: it dedups by the idempotency key Ratchet passes in `_meta`) and
 * `refund` (no hint → at-most-once). Streamable HTTP on MCP_PORT (default 3333), or stdio with
 * `--stdio`:
 *
 *   node --conditions=ratchet-src -r @swc-node/register examples/mcp-server/server.ts
 *   MCP_SERVERS='[{"name":"shop","url":"http://127.0.0.1:3333/mcp"}]'   # for the tool executor
 */
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const orders = new Map<string, { status: string }>([
  ['o-1', { status: 'paid' }],
  ['o-2', { status: 'shipped' }],
]);
/** Effects by idempotency key: a repeat of the same logical call gets the first answer back. */
const done = new Map<string, unknown>();
const text = (value: unknown) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
});

function build(): McpServer {
  const server = new McpServer({ name: 'orders', version: '1.0.0' });
  server.registerTool(
    'lookup',
    {
      description: 'The status of an order.',
      inputSchema: { orderId: z.string().describe('Order id, e.g. o-1') },
      annotations: { readOnlyHint: true },
    },
    ({ orderId }) => {
      const order = orders.get(orderId);
      if (!order) return { isError: true, content: [{ type: 'text', text: `no order ${orderId}` }] };
      return text({ orderId, ...order });
    },
  );
  server.registerTool(
    'set_status',
    {
      description: 'Set the status of an order.',
      inputSchema: { orderId: z.string(), status: z.enum(['paid', 'shipped', 'cancelled']) },
      annotations: { readOnlyHint: false, idempotentHint: true },
    },
    ({ orderId, status }, extra) => {
      const key = String(extra._meta?.['idempotencyKey'] ?? '');
      if (key && done.has(key)) return text(done.get(key));
      orders.set(orderId, { status });
      const result = { orderId, status };
      if (key) done.set(key, result);
      return text(result);
    },
  );
  server.registerTool(
    'refund',
    {
      description: 'Refund an order (money leaves: never twice).',
      inputSchema: { orderId: z.string(), cents: z.number().int().positive() },
    },
    ({ orderId, cents }) => text({ orderId, refunded: cents, refundId: `r-${orderId}-${cents}` }),
  );
  return server;
}

async function main(): Promise<void> {
  if (process.argv.includes('--stdio')) {
    await build().connect(new StdioServerTransport());
    return;
  }
  const port = Number(process.env['MCP_PORT'] ?? 3333);
  const http = createServer((req, res) => {
    if (req.url !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    // Stateless: a fresh server and transport per request (no session to keep).
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close().then(() => server.close()));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  http.listen(port, '127.0.0.1', () => console.log(`MCP server on http://127.0.0.1:${port}/mcp`));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
