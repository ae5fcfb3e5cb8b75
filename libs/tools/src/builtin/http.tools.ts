import { Agent, request } from 'undici';
import { z } from 'zod';
import type { Json } from '@ratchet/contracts';
import { defineTool, ToolError, type AnyTool } from '../tool';
import { EgressPolicy, EgressRefusedError } from './egress';

/** The most response body a call may return to the model (bytes); a call may ask for less. */
export const HTTP_MAX_RESPONSE_BYTES = 256 * 1024;
const HTTP_MAX_TIMEOUT_MS = 30_000;
const RESPONSE_HEADERS = ['content-type', 'content-length', 'location', 'retry-after', 'etag'];

/** `api.example.com` matches itself; `*.example.com` matches any subdomain (not example.com itself). */
export function hostAllowed(host: string, allow: readonly string[] | undefined): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return (allow ?? []).some((pattern) => {
    const p = pattern.toLowerCase().replace(/\.$/, '');
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
  });
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * An HTTP request to a host the calling agent allows (`tools[].config.allowHosts`; none = every host
 * refused). It always sends `Idempotency-Key` = the ledger key. GET and HEAD are idempotent. A
 * mutating method (POST/PUT/PATCH/DELETE) is at-most-once — never repeated after a crash or a lost
 * answer, escalated instead — unless the agent's config says its hosts honour the header
 * (`honoursIdempotencyKey: true`): only then is it retried with the same key. Redirects are not
 * followed (a redirect could leave the allowlist); 429 and 5xx are retried with backoff where the kind
 * allows; other statuses go back to the model. Whatever the agent allows, an address inside the
 * deployment is refused unless the deployment allows it (see EgressPolicy), checked on the address
 * each connection is made to.
 */
export function createHttpRequestTool(egress: EgressPolicy = new EgressPolicy()) {
  // Every connection resolves through the policy: the address checked is the address connected to.
  const dispatcher = new Agent({ connect: { lookup: egress.lookup } });
  return defineTool({
    name: 'http.request',
    description:
      'Make an HTTP request to an allowed host. Returns status, selected headers and the body as text (truncated at a size cap).',
    kind: 'idempotent',
    kindOf: (args, config) =>
      MUTATING.has(String(args['method'] ?? 'GET').toUpperCase()) && config.honoursIdempotencyKey !== true
        ? 'at-most-once'
        : 'idempotent',
    timeoutMs: HTTP_MAX_TIMEOUT_MS + 1000,
    retry: { attempts: 3, backoffMs: 250 },
    input: z.object({
      url: z.url({ protocol: /^https?$/ }).describe('Absolute http(s) URL'),
      method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
      headers: z.record(z.string().min(1).max(128), z.string().max(4096)).default({}).describe('Request headers'),
      body: z.string().max(1_000_000).optional().describe('Request body (text; set content-type in headers)'),
      timeoutMs: z.number().int().min(100).max(HTTP_MAX_TIMEOUT_MS).default(10_000),
      maxBytes: z
        .number()
        .int()
        .min(1)
        .max(HTTP_MAX_RESPONSE_BYTES)
        .default(64 * 1024),
    }),
    async execute(args, ctx) {
      const url = new URL(args.url);
      if (url.username || url.password)
        throw new ToolError('http.credentials_in_url', 'credentials in the URL are not allowed');
      if (!hostAllowed(url.hostname, ctx.config.allowHosts)) {
        throw new ToolError(
          'http.host_not_allowed',
          `host ${url.hostname} is not in this agent's allowHosts (${(ctx.config.allowHosts ?? []).join(', ') || 'none'})`,
        );
      }
      try {
        egress.checkLiteral(url.hostname);
      } catch (error) {
        throw refused(error as EgressRefusedError);
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(args.headers)) {
        const lower = k.toLowerCase();
        if (lower === 'idempotency-key' || lower === 'host' || lower === 'content-length') continue;
        headers[k] = v;
      }
      headers['Idempotency-Key'] = ctx.idempotencyKey;
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(args.timeoutMs)]);
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: args.method,
          headers,
          ...(args.body !== undefined && args.method !== 'GET' && args.method !== 'HEAD' ? { body: args.body } : {}),
          signal,
          dispatcher,
          headersTimeout: args.timeoutMs,
          bodyTimeout: args.timeoutMs,
        });
      } catch (error) {
        const egressRefusal = findEgressRefusal(error);
        if (egressRefusal) throw refused(egressRefusal);
        // Refused or unresolved: nothing reached the server. Anything else may have (retried only when
        // the call is idempotent: the key goes with it).
        const code = (error as { code?: string }).code ?? '';
        const notSent = code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
        throw new ToolError('http.unreachable', `${args.method} ${url.host}: ${(error as Error).message}`, true, {
          mayHaveActed: !notSent,
          cause: error,
        });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        const room = args.maxBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size += room;
          truncated = true;
          res.body.destroy();
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      if (res.statusCode === 429 || res.statusCode >= 500) {
        throw new ToolError(
          'http.status_' + res.statusCode,
          `${args.method} ${url.host} answered ${res.statusCode}`,
          true,
          // 429: refused, not acted. A 5xx may have acted (a mutating call without the header is then uncertain).
          { mayHaveActed: res.statusCode !== 429 },
        );
      }
      const picked: Record<string, Json> = {};
      for (const name of RESPONSE_HEADERS) {
        const v = res.headers[name];
        if (v !== undefined) picked[name] = Array.isArray(v) ? v.join(', ') : v;
      }
      // A NUL (binary content) could not be stored in the log: shown as U+FFFD like any undecodable byte.
      const body = Buffer.concat(chunks)
        .toString('utf8')
        .replace(/\u0000/g, '\uFFFD');
      return { status: res.statusCode, headers: picked, body, truncated };
    },
  });
}

/** `http.request` with no address inside the deployment allowed (the executor builds its own from config). */
export const httpRequest = createHttpRequestTool();

/** The built-in tools with `http.request` bound to the deployment's egress policy. */
export function withEgressPolicy(tools: readonly AnyTool[], egress: EgressPolicy): AnyTool[] {
  return tools.map((t) => (t.name === 'http.request' ? (createHttpRequestTool(egress) as unknown as AnyTool) : t));
}

function refused(error: EgressRefusedError): ToolError {
  // Nothing was sent; the same call would be refused again.
  return new ToolError('http.address_not_allowed', error.message, false, { mayHaveActed: false, cause: error });
}

function findEgressRefusal(error: unknown): EgressRefusedError | undefined {
  for (let e = error, i = 0; e && i < 6; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof EgressRefusedError) return e;
  return undefined;
}
