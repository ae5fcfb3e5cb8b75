import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  ApiKeyRepository,
  GATEWAY_MIGRATIONS,
  JetStreamPublisher,
  connectNats,
  declareTopology,
  deleteTopology,
  ensureTopology,
  openDatabase,
  type Database,
  type MessagePublisher,
  type Topology,
} from '@ratchet/adapters';
import { RunRequest, subjects } from '@ratchet/contracts';
import { loadConfig, runIdFor, threadIdFor } from '@ratchet/platform';
import { createTestDatabase, uniquePrefix, type TestDatabase } from '@ratchet/testing';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { AddressInfo } from 'node:net';
import { ensureBootstrapKey } from '../src/bootstrap/bootstrap-key';
import { gatewayConfigSchema } from '../src/gateway.config';
import { createGatewayApp } from '../src/http/create-app';
import { createLogger } from '../src/logging/logger';

/*
 * The gateway in-process, over HTTP, against real Postgres (a database of its own) and nats-server
 * (a subject and stream prefix of its own). The app owns (and closes) the connections it is given;
 * the test keeps separate ones to look at what the app wrote.
 */
const BODY_LIMIT = 4096;

let testDb: TestDatabase;
let db: Database;
let nc: NatsConnection;
let jsm: JetStreamManager;
let appNc: NatsConnection;
let topology: Topology;
let app: NestExpressApplication;
let base: string;
let prefix: ReturnType<typeof uniquePrefix>;
let runnerKey: { id: string; secret: string };
let viewerKey: { secret: string };
/** Swapped to a publisher on a closed connection to see the gateway's answer when NATS is gone. */
let publisher: MessagePublisher;

beforeAll(async () => {
  testDb = await createTestDatabase();
  prefix = uniquePrefix();
  const natsUrl = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
  const config = loadConfig(
    gatewayConfigSchema,
    {
      DATABASE_URL: testDb.url,
      NATS_URL: natsUrl,
      RATCHET_SUBJECT_PREFIX: prefix.subject,
      RATCHET_STREAM_PREFIX: prefix.stream,
      GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      GATEWAY_PUBLISH_TIMEOUT_MS: '2000',
      GATEWAY_AUTH_FAILURES_PER_MINUTE: '10',
    },
    'gateway',
  );

  db = await openDatabase({ url: testDb.url, schema: 'gateway', migrations: GATEWAY_MIGRATIONS });
  await db.migrate(); // the template is migrated already: this proves a restart's migrate() is a no-op
  nc = await connectNats({ url: natsUrl, name: 'gateway-int-spec' });
  jsm = await nc.jetstreamManager();
  topology = declareTopology({ subjectPrefix: prefix.subject, streamPrefix: prefix.stream, storage: 'memory' });
  await ensureTopology(jsm, topology, []);

  const keys = new ApiKeyRepository(db.sql);
  const runner = await keys.create({ tenantId: 'acme', name: 'runner', roles: ['runner'] });
  runnerKey = { id: runner.key.id, secret: runner.secret };
  viewerKey = await keys.create({ tenantId: 'acme', name: 'viewer', roles: ['viewer'] });

  const appDb = await openDatabase({ url: testDb.url, schema: 'gateway', migrations: GATEWAY_MIGRATIONS, poolMax: 2 });
  appNc = await connectNats({ url: natsUrl, name: 'gateway-int-spec-app' });
  const real = new JetStreamPublisher(appNc);
  publisher = real;
  app = await createGatewayApp({
    config,
    db: appDb,
    nc: appNc,
    logger: createLogger({ level: 'silent', instance: 'int-spec' }),
    publisher: { publish: (...args) => publisher.publish(...args) },
  });
  await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  if (jsm && topology) await deleteTopology(jsm, topology);
  await nc?.close();
  await db?.close();
  await testDb?.drop();
});

const requestsStream = () => `${prefix.stream}_REQUESTS`;

function postRun(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${runnerKey.secret}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function expectProblem(res: Response, status: number): Promise<Record<string, unknown>> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = (await res.json()) as Record<string, unknown>;
  expect(problem).toMatchObject({
    status,
    type: expect.any(String),
    title: expect.any(String),
    instance: expect.any(String),
  });
  return problem;
}

async function storedRequests(tenant: string): Promise<number> {
  const info = await jsm.streams.info(requestsStream(), { subjects_filter: subjects(prefix.subject).requests(tenant) });
  return info.state.subjects?.[subjects(prefix.subject).requests(tenant)] ?? 0;
}

describe('POST /v1/runs', () => {
  it('answers 401 without a key, and with a key it does not know', async () => {
    const none = await postRun({ agent: 'a', input: 'x' }, { authorization: '' });
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expectProblem(none, 401);
    const wrong = await postRun({ agent: 'a', input: 'x' }, { authorization: 'Bearer rk_not-a-key' });
    expect(await expectProblem(wrong, 401)).toMatchObject({
      type: 'urn:ratchet:problem:unauthenticated',
      instance: '/v1/runs',
    });
  });

  it('answers 403 to a key without the runner role', async () => {
    await expectProblem(
      await postRun({ agent: 'a', input: 'x' }, { authorization: `Bearer ${viewerKey.secret}` }),
      403,
    );
  });

  it('answers 400 listing every issue of a bad body, a tenant in the body included', async () => {
    const problem = await expectProblem(await postRun({ agent: '', input: [], tenantId: 'globex' }), 400);
    expect(problem['errors']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: '#/agent' }),
        expect.objectContaining({ pointer: '#/input' }),
        expect.objectContaining({ pointer: '#/tenantId', code: 'unrecognized_keys' }),
      ]),
    );
    await expectProblem(await postRun('{"agent":'), 400);
    await expectProblem(await postRun({ agent: 'a', input: 'x' }, { 'idempotency-key': 'has space' }), 400);
  });

  it('answers 413 to a body over the limit', async () => {
    const problem = await expectProblem(await postRun({ agent: 'a', input: 'x'.repeat(BODY_LIMIT * 2) }), 413);
    expect(problem['type']).toBe('urn:ratchet:problem:payload-too-large');
  });

  it("accepts a run and puts the RunRequest on the tenant's request subject", async () => {
    const key = `idem-${Date.now()}`;
    const res = await postRun(
      { agent: 'support', input: 'hello', metadata: { source: 'int' } },
      { 'idempotency-key': key },
    );
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body).toEqual({
      runId: runIdFor('acme', key),
      threadId: threadIdFor('acme', key),
      requestId: key,
      status: 'accepted',
      links: {
        events: `/v1/threads/${threadIdFor('acme', key)}/events`,
        run: `/v1/runs/${runIdFor('acme', key)}`,
        thread: `/v1/threads/${threadIdFor('acme', key)}`,
      },
    });

    const subject = subjects(prefix.subject).requests('acme');
    const stored = await jsm.streams.getMessage(requestsStream(), { last_by_subj: subject });
    expect(stored.subject).toBe(subject); // the tenant is the credential's, carried by the subject
    expect(stored.header.get('Nats-Msg-Id')).toBe(`acme:${key}`);
    expect(RunRequest.parse(stored.json())).toEqual({
      requestId: key,
      agent: 'support',
      input: [{ role: 'user', content: 'hello' }],
      principal: { id: `key:${runnerKey.id}`, roles: ['runner'] },
      metadata: { source: 'int' },
      concurrency: 'reject',
    });
  });

  it('answers the same ids to the same Idempotency-Key and stores the request once', async () => {
    const key = `same-${Date.now()}`;
    const before = await storedRequests('acme');
    const first = await postRun({ agent: 'a', input: 'x', threadId: 'th_existing' }, { 'idempotency-key': key });
    const second = await postRun(
      { agent: 'a', input: 'x', threadId: 'th_existing' },
      { 'idempotency-key': `"${key}"` },
    );
    expect([first.status, second.status]).toEqual([202, 202]);
    const [a, b] = [await first.json(), await second.json()];
    expect(b).toEqual(a);
    expect(a).toMatchObject({ runId: runIdFor('acme', key), threadId: 'th_existing' });
    expect(await storedRequests('acme')).toBe(before + 1);
  });

  it('refuses the same Idempotency-Key with another body (409 request.conflict naming it) and publishes nothing', async () => {
    const key = `conflict-${Date.now()}`;
    expect((await postRun({ agent: 'a', input: 'x' }, { 'idempotency-key': key })).status).toBe(202);
    const before = await storedRequests('acme');
    const problem = await expectProblem(await postRun({ agent: 'a', input: 'y' }, { 'idempotency-key': key }), 409);
    expect(problem).toMatchObject({ code: 'request.conflict', idempotencyKey: key, operation: 'POST /v1/runs' });
    expect(await storedRequests('acme')).toBe(before);
  });

  it('answers one of two concurrent first uses of a key; the other gets the same answer or waits (409 in progress)', async () => {
    const key = `race-${Date.now()}`;
    const [a, b] = await Promise.all([
      postRun({ agent: 'a', input: 'x' }, { 'idempotency-key': key }),
      postRun({ agent: 'a', input: 'x' }, { 'idempotency-key': key }),
    ]);
    const answers = [
      { status: a.status, body: (await a.json()) as Record<string, unknown> },
      { status: b.status, body: (await b.json()) as Record<string, unknown> },
    ];
    const accepted = answers.filter((x) => x.status === 202);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    for (const other of answers.filter((x) => x.status !== 202))
      expect(other).toMatchObject({ status: 409, body: { code: 'request.in_progress', idempotencyKey: key } });
    expect(accepted.every((x) => x.body['runId'] === runIdFor('acme', key))).toBe(true);
  });

  it('generates a requestId when the client sends no Idempotency-Key', async () => {
    const [a, b] = await Promise.all([postRun({ agent: 'a', input: 'x' }), postRun({ agent: 'a', input: 'x' })]);
    const [ra, rb] = [(await a.json()) as { requestId: string; runId: string }, (await b.json()) as { runId: string }];
    expect(ra.requestId).toMatch(/^req_/);
    expect(ra.runId).not.toBe(rb.runId);
  });

  it('answers 503 with Retry-After when the bus cannot take the request', async () => {
    const closed = await connectNats({
      url: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      name: 'gateway-int-spec-closed',
    });
    await closed.close();
    const real = publisher;
    publisher = new JetStreamPublisher(closed);
    try {
      const res = await postRun({ agent: 'a', input: 'x' }, { 'idempotency-key': 'while-down' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await expectProblem(res, 503)).toMatchObject({ type: 'urn:ratchet:problem:unavailable' });
    } finally {
      publisher = real;
    }
    // The failed request freed its key: the retry with it is done afresh, once the bus is back.
    const retry = await postRun({ agent: 'a', input: 'x' }, { 'idempotency-key': 'while-down' });
    expect(retry.status).toBe(202);
  });
});

describe('input the log cannot hold', () => {
  it('answers 400 naming the field for a NUL character or a lone surrogate in the body, and publishes nothing', async () => {
    const before = await storedRequests('acme');
    const nul = await expectProblem(await postRun({ agent: 'a', input: 'hello\u0000world' }), 400);
    expect(nul['errors']).toEqual([expect.objectContaining({ pointer: '#/input', code: 'unstorable.nul' })]);
    // A lone surrogate arrives as a JSON escape (the wire bytes are valid UTF-8).
    const lone = await expectProblem(await postRun('{"agent":"a","input":"x","metadata":{"k":"\\ud800"}}'), 400);
    expect(lone['errors']).toEqual([
      expect.objectContaining({ pointer: '#/metadata/k', code: 'unstorable.lone-surrogate' }),
    ]);
    expect(await storedRequests('acme')).toBe(before);
  });

  it('answers 400 to JSON nested deeper than 64 levels', async () => {
    const deep = `{"agent":"a","input":"x","metadata":{"k":${'['.repeat(100)}${']'.repeat(100)}}}`;
    const problem = await expectProblem(await postRun(deep), 400);
    expect(problem['detail']).toMatch(/nested deeper than 64 levels/);
  });

  it('answers 400 to a NUL character or a lone surrogate in an id or a query parameter, never a 5xx', async () => {
    const auth = { authorization: `Bearer ${runnerKey.secret}` };
    await expectProblem(await fetch(`${base}/v1/threads/th_x%00y`, { headers: auth }), 400);
    await expectProblem(await fetch(`${base}/v1/runs/run%00/`, { headers: auth }), 400);
    await expectProblem(await fetch(`${base}/v1/threads?cursor=%00`, { headers: auth }), 400);
    await expectProblem(await fetch(`${base}/v1/threads/%ED%A0%80`, { headers: auth }), 400);
  });

  it('answers 4xx to a Content-Encoding it does not speak or a body that does not decode', async () => {
    const unknown = await postRun('{"agent":"a","input":"x"}', { 'content-encoding': 'zstd-nonsense' });
    expect(unknown.status).toBe(415);
    await expectProblem(unknown, 415);
    const garbage = await postRun('this is not gzip', { 'content-encoding': 'gzip' });
    expect(garbage.status).toBeGreaterThanOrEqual(400);
    expect(garbage.status).toBeLessThan(500);
    await expectProblem(garbage, garbage.status);
  });
});

describe('bootstrap key', () => {
  it('is created once however many replicas start at the same moment, and a revoked one stays revoked', async () => {
    const keys = new ApiKeyRepository(db.sql);
    const secret = `boot-${Date.now()}-0123456789`;
    const outcomes = await Promise.all([1, 2, 3].map(() => ensureBootstrapKey(keys, secret, 'boot')));
    expect(outcomes.filter((o) => o.status === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'exists')).toHaveLength(2);
    const [stored] = await keys.listByTenant('boot');
    expect(await keys.listByTenant('boot')).toHaveLength(1);
    expect(stored?.roles).toEqual(['runner', 'viewer', 'approver', 'admin']);

    const res = await postRun({ agent: 'a', input: 'x' }, { authorization: `Bearer ${secret}` });
    expect(res.status).toBe(202);

    await keys.revoke(stored!.id);
    expect(await ensureBootstrapKey(keys, secret, 'boot')).toEqual({ status: 'disabled' });
    expect(await keys.listByTenant('boot')).toHaveLength(1);
    await expectProblem(await postRun({ agent: 'a', input: 'x' }, { authorization: `Bearer ${secret}` }), 401);
  });
});

describe('health', () => {
  it('is live and ready without a key', async () => {
    expect((await fetch(`${base}/health/live`)).status).toBe(200);
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      details: { postgres: { status: 'up' }, migrations: { status: 'up' }, nats: { status: 'up' } },
    });
  });

  // Last: it closes the app's NATS connection.
  it('is not ready once the NATS connection is closed', async () => {
    await appNc.close();
    const problem = await expectProblem(await fetch(`${base}/health/ready`), 503);
    expect(problem).toMatchObject({
      type: 'urn:ratchet:problem:not-ready',
      checks: { nats: { status: 'down' }, postgres: { status: 'up' } },
    });
    expect((await fetch(`${base}/health/live`)).status).toBe(200);
  });
});

// Last in this file: it uses up the failed-authentication allowance of 127.0.0.1, where every request comes from.
describe('repeated bad credentials', () => {
  it('answer 429 with Retry-After for the source address, a good key from it included, never more 401s', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await postRun({ agent: 'a', input: 'x' }, { authorization: `Bearer rk_guess-${i}` })).status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.at(-1)).toBe(429);
    const good = await postRun({ agent: 'a', input: 'x' });
    const problem = await expectProblem(good, 429);
    expect(good.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(problem).toMatchObject({ type: 'urn:ratchet:problem:rate-limited', limit: 'source' });
  });
});
