import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { terminal, TestStack } from './stack';

/*
 * The gateway as a real process in front of the orchestrator, tool-executor and memory: runs over
 * HTTP, the event log over Server-Sent Events (disconnect, resume with Last-Event-ID, miss nothing),
 * Idempotency-Key, the outcome wait, and JWT bearer tokens verified against a JWKS this test serves.
 */

const KEY = 'rk_e2e_gateway_api_bootstrap_key';
const TENANT = 'demo';
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'ratchet-e2e';

interface SseEvent {
  id: number;
  event: string;
  data: { version: number; type: string; runId?: string };
}

/** Reads SSE messages until `stop` says so, then disconnects (aborts the request). */
async function follow(
  url: string,
  headers: Record<string, string>,
  stop: (seen: SseEvent[]) => boolean,
): Promise<SseEvent[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 60_000);
  const res = await fetch(url, { headers, signal: abort.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const seen: SseEvent[] = [];
  const reader = res.body!.getReader();
  let buffer = '';
  try {
    while (!stop(seen)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += new TextDecoder().decode(value);
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          frame
            .split('\n')
            .filter((l) => !l.startsWith(':') && l.includes(': '))
            .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
        );
        if (fields['id'] === undefined) continue;
        seen.push({ id: Number(fields['id']), event: fields['event']!, data: JSON.parse(fields['data']!) });
        if (stop(seen)) break;
      }
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return seen;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers read loosely in assertions */
describe('gateway API end to end', () => {
  let stack: TestStack;
  let base: string;
  let jwks: Server;
  let signingKey: KeyLike;
  let otherKey: KeyLike;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    otherKey = (await generateKeyPair('RS256')).privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));

    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator'), stack.start('tool-executor'), stack.start('memory')]);
    const gateway = await stack.start('gateway', {
      GATEWAY_BOOTSTRAP_API_KEY: KEY,
      GATEWAY_BOOTSTRAP_TENANT: TENANT,
      GATEWAY_JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
      GATEWAY_JWT_ISSUER: ISSUER,
      GATEWAY_JWT_AUDIENCE: AUDIENCE,
    });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  afterAll(async () => {
    await stack?.stop();
    jwks?.closeAllConnections();
    await new Promise((r) => jwks?.close(r));
  });

  const auth = { authorization: `Bearer ${KEY}` };
  const startRun = (idempotencyKey: string, input: string) =>
    fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ agent: 'demo', input }),
    });

  it('starts a run, follows it over SSE, reconnects with Last-Event-ID and misses nothing', async () => {
    const first = await startRun('sse-run-1', 'What is the weather in Oslo?');
    expect(first.status).toBe(202);
    const run = (await first.json()) as { runId: string; threadId: string };
    // The same Idempotency-Key again: the same run, not a second one.
    const again = await startRun('sse-run-1', 'What is the weather in Oslo?');
    expect(await again.json()).toMatchObject({ runId: run.runId, threadId: run.threadId });

    const stream = `${base}/v1/threads/${run.threadId}/events/stream`;
    const part1 = await follow(stream, auth, (seen) => seen.length >= 3);
    expect(part1.map((e) => e.id)).toEqual([1, 2, 3]);
    const ended = (seen: SseEvent[]) => seen.some((e) => e.event === 'run.completed' && e.data.runId === run.runId);
    const part2 = await follow(stream, { ...auth, 'last-event-id': String(part1.at(-1)!.id) }, ended);

    const log = await stack.waitFor(TENANT, run.threadId, terminal(run.runId));
    const received = [...part1, ...part2];
    // Every event of the log, once, in order, with the SSE id = the version and the event name = the type.
    expect(received.map((e) => `${e.id}:${e.event}`)).toEqual(log.map((e) => `${e.version}:${e.type}`));
    expect(received.every((e) => e.data.version === e.id && e.data.type === e.event)).toBe(true);

    // Exactly one run for the key, however often it was sent.
    const thread: any = await (await fetch(`${base}/v1/threads/${run.threadId}`, { headers: auth })).json();
    expect(thread.runs.map((r: { runId: string }) => r.runId)).toEqual([run.runId]);

    const outcome = await fetch(`${base}/v1/runs/${run.runId}/outcome?waitSeconds=30`, { headers: auth });
    expect(outcome.status).toBe(200);
    expect(await outcome.json()).toMatchObject({ done: true, run: { runId: run.runId, status: 'completed' } });

    // Paging the log gives the same events.
    const page: any = await (
      await fetch(`${base}/v1/threads/${run.threadId}/events?after=2&limit=2`, { headers: auth })
    ).json();
    expect(page.events.map((e: { version: number }) => e.version)).toEqual([3, 4]);
    expect(page).toMatchObject({ hasMore: true, nextAfter: 4 });
  });

  it('resumes a live stream: events committed while disconnected arrive after reconnecting', async () => {
    const started: any = await (await startRun('sse-run-2', 'Weather in Paris?')).json();
    const stream = `${base}/v1/threads/${started.threadId}/events/stream`;
    // A thread exists from its first event; before that its stream is a 404 like any unknown thread.
    await stack.waitFor(TENANT, started.threadId, (events) => events.length > 0);
    const before = await follow(stream, auth, (seen) => seen.length >= 1);
    // Disconnected; let the run finish entirely, then resume from what was seen.
    const log = await stack.waitFor(TENANT, started.threadId, terminal(started.runId));
    const after = await follow(stream, { ...auth, 'last-event-id': String(before.at(-1)!.id) }, (seen) =>
      seen.some((e) => e.event === 'run.completed'),
    );
    expect([...before, ...after].map((e) => e.id)).toEqual(log.map((e) => e.version));
  });

  describe('JWT bearer tokens', () => {
    const token = (claims: Record<string, unknown> = {}, options: { key?: KeyLike; exp?: string | number } = {}) =>
      new SignJWT({ tenant: TENANT, roles: ['viewer'], iss: ISSUER, aud: AUDIENCE, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('alice')
        .setIssuedAt()
        .setExpirationTime(options.exp ?? '5m')
        .sign(options.key ?? signingKey);
    const get = (jwt: string, path = '/v1/threads') =>
      fetch(`${base}${path}`, { headers: { authorization: `Bearer ${jwt}` } });

    it('accepts a valid token: tenant and roles from its claims', async () => {
      const res = await get(await token());
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).threads.length).toBeGreaterThan(0);
      // viewer may read but not start runs.
      const post = await fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'demo', input: 'x' }),
      });
      expect(post.status).toBe(403);
      // Another tenant in the claim sees none of demo's threads.
      const other: any = await (await get(await token({ tenant: 'globex' }))).json();
      expect(other.threads).toEqual([]);
    });

    it.each([
      ['a wrong issuer', () => token({ iss: 'https://evil.test' })],
      ['a wrong audience', () => token({ aud: 'someone-else' })],
      ['an expired token', () => token({}, { exp: Math.floor(Date.now() / 1000) - 3600 })],
      ['a key not in the JWKS', () => token({}, { key: otherKey })],
      [
        'alg none (unsigned)',
        async () =>
          unsigned({
            sub: 'alice',
            tenant: TENANT,
            roles: ['admin'],
            iss: ISSUER,
            aud: AUDIENCE,
            exp: Math.floor(Date.now() / 1000) + 300,
          }),
      ],
      [
        'an HS256 token (algorithm not pinned)',
        async () =>
          new SignJWT({ tenant: TENANT, roles: ['admin'] })
            .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
            .setSubject('alice')
            .setIssuer(ISSUER)
            .setAudience(AUDIENCE)
            .setExpirationTime('5m')
            .sign(new TextEncoder().encode('a-shared-secret-of-enough-length!!')),
      ],
      ['a token without a tenant', () => token({ tenant: undefined })],
    ])('refuses %s with 401 problem details', async (_name, make) => {
      const res = await get(await make());
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await res.json()).toMatchObject({ status: 401, type: 'urn:ratchet:problem:unauthenticated' });
    });
  });

  it('serves the OpenAPI document and Swagger UI without a credential', async () => {
    const doc: any = await (await fetch(`${base}/docs/openapi.json`)).json();
    expect(doc.paths['/v1/threads/{threadId}/events/stream']).toBeDefined();
    expect((await fetch(`${base}/docs`)).status).toBe(200);
  });
});

function unsigned(payload: Record<string, unknown>): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
}
