import addFormats from 'ajv-formats';
import OpenAPIBackend from 'openapi-backend';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * A validating proxy in front of a gateway: every request to `/v1/…` is checked against
 * docs/openapi.json (path, parameters, body) before it is forwarded, and every JSON answer against the
 * operation's response schema for its status. Event streams and the console's files pass through.
 * Clients (the CLI, a browser) talk to `url` as if it were the gateway; `GET /__openapi-proxy` answers
 * what it found. Runs as its own process (the validator's dependencies are ES modules):
 *   node --conditions=ratchet-src -r @swc-node/register test/e2e/openapi-proxy.ts http://127.0.0.1:8080
 */
export class OpenApiProxy {
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    /** Violations, and the operations seen (`Approvals_decide 200` …: what the clients really exercised). */
    readonly found: { violations: string[]; seen: Set<string> },
  ) {}

  static async start(target: string): Promise<OpenApiProxy> {
    const definition = exclusiveBoundsAsNumbers(
      JSON.parse(readFileSync(path.resolve(__dirname, '../../docs/openapi.json'), 'utf8')),
    );
    const api = new OpenAPIBackend({
      definition,
      quick: false,
      validate: true,
      strict: true,
      customizeAjv: (ajv) => addFormats(ajv as never) as never,
    });
    await api.init();
    const upstream = new URL(target);
    const found = { violations: [] as string[], seen: new Set<string>() };
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const url = new URL(req.url ?? '/', 'http://proxy');
        if (url.pathname === '/__openapi-proxy') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ violations: found.violations, seen: [...found.seen] }));
          return;
        }
        const checked = url.pathname.startsWith('/v1/');
        let operationId = '';
        if (checked) {
          const request = {
            method: req.method ?? 'GET',
            path: url.pathname,
            query: url.search.slice(1),
            headers: req.headers as Record<string, string>,
            ...(raw.length > 0 ? { body: JSON.parse(raw.toString()) as unknown } : {}),
          };
          const operation = api.matchOperation(request);
          if (!operation) found.violations.push(`${request.method} ${url.pathname}: no such operation`);
          else {
            operationId = operation.operationId ?? '';
            const result = api.validateRequest(request, operation);
            if (!result.valid)
              found.violations.push(`${operationId} request: ${JSON.stringify(result.errors)} (${raw.toString()})`);
          }
        }
        const forward = http.request(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, host: upstream.host },
          },
          (answer) => {
            const type = String(answer.headers['content-type'] ?? '');
            if (!checked || !/json/.test(type)) {
              if (checked) found.seen.add(`${operationId} ${answer.statusCode}`);
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
              return;
            }
            const body: Buffer[] = [];
            answer.on('data', (c: Buffer) => body.push(c));
            answer.on('end', () => {
              const text = Buffer.concat(body).toString();
              const status = answer.statusCode ?? 502;
              found.seen.add(`${operationId} ${status}`);
              if (operationId) {
                const result = api.validateResponse(text ? JSON.parse(text) : undefined, operationId, status);
                if (!result.valid)
                  found.violations.push(`${operationId} ${status} response: ${JSON.stringify(result.errors)}`);
              }
              res.writeHead(status, answer.headers);
              res.end(text);
            });
          },
        );
        forward.on('error', (error) => {
          res.writeHead(502);
          res.end(String(error));
        });
        res.on('close', () => res.writableEnded || forward.destroy());
        forward.end(raw);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new OpenApiProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, found);
    return proxy;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * OpenAPI 3.0 writes an exclusive bound as `minimum: 0, exclusiveMinimum: true`; the validator's JSON
 * Schema dialect (draft 7) as `exclusiveMinimum: 0`. The same constraint, spelled for the validator.
 */
function exclusiveBoundsAsNumbers<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => exclusiveBoundsAsNumbers(v)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = exclusiveBoundsAsNumbers(v);
  for (const [bound, exclusive] of [
    ['minimum', 'exclusiveMinimum'],
    ['maximum', 'exclusiveMaximum'],
  ] as const) {
    if (out[exclusive] === true && typeof out[bound] === 'number') {
      out[exclusive] = out[bound];
      delete out[bound];
    } else if (out[exclusive] === false) delete out[exclusive];
  }
  return out as T;
}

if (require.main === module) {
  void OpenApiProxy.start(process.argv[2] ?? 'http://127.0.0.1:8080').then((proxy) => {
    process.stdout.write(`listening ${proxy.url}\n`);
    process.on('SIGTERM', () => void proxy.stop().then(() => process.exit(0)));
  });
}
