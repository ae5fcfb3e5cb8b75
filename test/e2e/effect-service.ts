import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The outside world: counts reads, calls and applied effects per key; dedups by Idempotency-Key. */
export class EffectService {
  readonly reads = new Map<string, number>();
  readonly calls = new Map<string, number>();
  readonly effects = new Map<string, number>();
  private readonly stored = new Map<string, string>();
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const key = String(req.headers['x-effect-key'] ?? '');
    const bump = (m: Map<string, number>) => m.set(key, (m.get(key) ?? 0) + 1);
    res.setHeader('content-type', 'application/json');
    if (req.method === 'GET' && req.url?.startsWith('/read')) {
      bump(this.reads);
      res.end(JSON.stringify({ item: new URL(req.url, 'http://x').searchParams.get('item'), stock: 7 }));
      return;
    }
    if (req.method === 'POST' && req.url === '/effects') {
      bump(this.calls);
      const idem = req.headers['idempotency-key'];
      if (typeof idem === 'string' && this.stored.has(idem)) {
        res.end(this.stored.get(idem));
        return;
      }
      const n = bump(this.effects).get(key) ?? 0;
      const reply = JSON.stringify({ applied: JSON.parse(body || '{}') as unknown, effect: `${key}#${n}` });
      if (typeof idem === 'string') this.stored.set(idem, reply);
      res.end(reply);
      return;
    }
    res.statusCode = 404;
    res.end('{}');
  }
}
