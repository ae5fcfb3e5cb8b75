import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The outside world for the demo effect tools (`demo.effect.*`, RATCHET_DEMO_EFFECT_URL): counts reads,
 * calls and applied effects per key (the `X-Effect-Key` header, the call's idempotency key), and dedups
 * by `Idempotency-Key` as a well-behaved API does. An effect is applied when its request arrives; an
 * item named `wait<ms>-…` makes the answer come that much later (a slow effect), so a test can act
 * while the call is acting.
 */
export class EffectService {
  readonly reads = new Map<string, number>();
  readonly calls = new Map<string, number>();
  readonly effects = new Map<string, number>();
  /** Requests being answered now, per key. */
  readonly acting = new Map<string, number>();
  /** Lookups of an effect by its key (`GET /effects/lookup`), per key. */
  readonly lookups = new Map<string, number>();
  /** The answer of the last effect applied under each key, as a lookup returns it. */
  private readonly applied = new Map<string, string>();
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

  /** Effects applied for keys containing `marker`, summed. */
  effectsFor(marker: string): number {
    return [...this.effects].filter(([k]) => k.includes(marker)).reduce((n, [, v]) => n + v, 0);
  }

  /** Requests (reads and calls) that arrived for keys containing `marker`, summed. */
  arrivalsFor(marker: string): number {
    return [...this.calls, ...this.reads].filter(([k]) => k.includes(marker)).reduce((n, [, v]) => n + v, 0);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const key = String(req.headers['x-effect-key'] ?? '');
    const bump = (m: Map<string, number>) => m.set(key, (m.get(key) ?? 0) + 1);
    const item =
      req.method === 'GET'
        ? new URL(req.url ?? '/', 'http://x').searchParams.get('item')
        : ((JSON.parse(body || '{}') as { item?: string }).item ?? null);
    const wait = Number(/^wait(\d+)-/.exec(item ?? '')?.[1] ?? 0);
    res.setHeader('content-type', 'application/json');
    if (req.method === 'GET' && req.url?.startsWith('/read')) {
      bump(this.reads);
      await this.slowly(key, wait);
      res.end(JSON.stringify({ item, stock: 7 }));
      return;
    }
    if (req.method === 'GET' && req.url === '/effects/lookup') {
      bump(this.lookups);
      const found = this.applied.get(key);
      res.statusCode = found === undefined ? 404 : 200;
      res.end(found ?? JSON.stringify({ found: false }));
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
      this.applied.set(key, reply);
      await this.slowly(key, wait);
      res.end(reply);
      return;
    }
    res.statusCode = 404;
    res.end('{}');
  }

  private async slowly(key: string, ms: number): Promise<void> {
    if (ms <= 0) return;
    this.acting.set(key, (this.acting.get(key) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, ms));
    this.acting.set(key, (this.acting.get(key) ?? 1) - 1);
  }
}
