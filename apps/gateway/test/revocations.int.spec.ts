import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  GATEWAY_MIGRATIONS,
  JwtRevocationsRepository,
  connectNats,
  openDatabase,
  type Database,
} from '@ratchet/adapters';
import { approvalsSubjects, PrincipalCheckReply } from '@ratchet/contracts';
import { loadConfig } from '@ratchet/platform';
import { createTestDatabase, uniquePrefix, type TestDatabase } from '@ratchet/testing';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import type { NatsConnection } from 'nats';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayConfigSchema } from '../src/gateway.config';
import { createGatewayApp } from '../src/http/create-app';
import { createLogger } from '../src/logging/logger';

/*
 * The JWT deny list (ADR 0035): the gateway in-process over HTTP, real Postgres and nats-server, JWTs
 * signed here and verified against a JWKS this test serves. Entries are managed by a tenant's admins
 * over /v1/revocations; a revoked token gets the answer an invalid one gets; the principals check (what
 * the approval re-check asks) answers `invalid` for a revoked subject.
 */
const ISSUER = 'https://idp.test';
const AUDIENCE = 'ratchet';

let testDb: TestDatabase;
let db: Database;
let nc: NatsConnection;
let app: NestExpressApplication;
let base: string;
let prefix: ReturnType<typeof uniquePrefix>;
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
      GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
      GATEWAY_JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
      GATEWAY_JWT_ISSUER: ISSUER,
      GATEWAY_JWT_AUDIENCE: AUDIENCE,
    },
    'gateway',
  );
  db = await openDatabase({ url: testDb.url, schema: 'gateway', migrations: GATEWAY_MIGRATIONS });
  await db.migrate();
  nc = await connectNats({ url: natsUrl, name: 'revocations-int-spec' });
  const appDb = await openDatabase({ url: testDb.url, schema: 'gateway', migrations: GATEWAY_MIGRATIONS, poolMax: 2 });
  const appNc = await connectNats({ url: natsUrl, name: 'revocations-int-spec-app' });
  app = await createGatewayApp({
    config,
    db: appDb,
    nc: appNc,
    logger: createLogger({ level: 'silent', instance: 'revocations-int-spec' }),
  });
  await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await nc?.close();
  await db?.close();
  await testDb?.drop();
  jwks?.closeAllConnections();
  await new Promise((r) => jwks?.close(r));
});

interface TokenOptions {
  tenant?: string;
  sub?: string;
  roles?: string[];
  jti?: string;
  iat?: number;
  key?: KeyLike;
}

function token(o: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT({ tenant: o.tenant ?? 'acme', roles: o.roles ?? ['admin'], iss: ISSUER, aud: AUDIENCE })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setSubject(o.sub ?? 'alice')
    .setIssuedAt(o.iat)
    .setExpirationTime('5m');
  if (o.jti) jwt.setJti(o.jti);
  return jwt.sign(o.key ?? signingKey);
}

async function http(method: string, path: string, jwt: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${jwt}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
}

const revoke = async (admin: string, body: Record<string, unknown>) => {
  const res = await http('POST', '/v1/revocations', admin, body);
  expect(res.status).toBe(201);
  return res.body as { id: string; subject: string; createdAt: string };
};

async function checkPrincipal(tenantId: string, principalId: string, runStartedAt?: string) {
  const msg = await nc.request(
    approvalsSubjects(prefix.subject).principalsCheck,
    JSON.stringify({ tenantId, principalId, roles: ['runner'], ...(runStartedAt ? { runStartedAt } : {}) }),
    { timeout: 5_000 },
  );
  return PrincipalCheckReply.parse(JSON.parse(new TextDecoder().decode(msg.data)));
}

/** A problem body without the parts that name the request. */
const strip = ({ instance: _i, traceId: _t, ...rest }: Record<string, unknown>) => rest;

describe('JWT revocations', () => {
  it('refuses every token of a revoked subject with the answer a forged token gets, and takes others', async () => {
    const admin = await token({ sub: 'root-admin-1' });
    const carol = await token({ sub: 'carol' });
    expect((await http('GET', '/v1/revocations', carol)).status).toBe(200);
    const entry = await revoke(admin, { subject: 'carol', reason: 'left the company' });
    expect(entry).toMatchObject({ subject: 'carol', jti: null, issuedBefore: null, createdBy: 'jwt:root-admin-1' });

    const revoked = await http('GET', '/v1/revocations', await token({ sub: 'carol' }));
    const forged = await http('GET', '/v1/revocations', await token({ sub: 'carol', key: otherKey }));
    expect(revoked.status).toBe(401);
    expect(strip(revoked.body)).toEqual(strip(forged.body));
    // Another subject of the tenant, and the same subject in another tenant, are not affected.
    expect((await http('GET', '/v1/revocations', await token({ sub: 'dave' }))).status).toBe(200);
    expect((await http('GET', '/v1/revocations', await token({ tenant: 'globex', sub: 'carol' }))).status).toBe(200);

    // Removing the entry lets the subject back in.
    expect((await http('DELETE', `/v1/revocations/${entry.id}`, admin)).body).toEqual({ deleted: entry.id });
    expect((await http('GET', '/v1/revocations', carol)).status).toBe(200);
  });

  it('narrows to one jti, or to tokens issued before a time', async () => {
    const admin = await token({ sub: 'root-admin-2' });
    await revoke(admin, { subject: 'erin', jti: 'stolen-1' });
    expect((await http('GET', '/v1/revocations', await token({ sub: 'erin', jti: 'stolen-1' }))).status).toBe(401);
    expect((await http('GET', '/v1/revocations', await token({ sub: 'erin', jti: 'fresh-2' }))).status).toBe(200);

    const now = Math.floor(Date.now() / 1000);
    await revoke(admin, { subject: 'frank', issuedBefore: new Date((now - 60) * 1000).toISOString() });
    expect((await http('GET', '/v1/revocations', await token({ sub: 'frank', iat: now - 120 }))).status).toBe(401);
    expect((await http('GET', '/v1/revocations', await token({ sub: 'frank', iat: now }))).status).toBe(200);
  });

  it('announces each entry to the orchestrators in its own commit: the whole subject, or some of its tokens', async () => {
    const admin = await token({ sub: 'root-admin-3' });
    const whole = await revoke(admin, { subject: 'hank', reason: 'left' });
    const narrow = await revoke(admin, { subject: 'ivy', jti: 'lost-1' });
    const rows = await db.sql.query<{ id: string; subject: string; payload: Record<string, unknown> }>(
      `select id, subject, payload from "orchestrator".outbox where id = any(?::text[]) order by id`,
      [`{revocation:${String(whole['id'])},revocation:${String(narrow['id'])}}`],
    );
    const announced = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(announced[`revocation:${String(whole['id'])}`]).toMatchObject({
      subject: `${prefix.subject}.cmd.revocation.acme`,
      payload: {
        kind: 'principal.revoked',
        tenantId: 'acme',
        principalId: 'jwt:hank',
        scope: 'principal',
        at: whole['createdAt'],
        by: 'jwt:root-admin-3',
        reason: 'left',
      },
    });
    expect(announced[`revocation:${String(narrow['id'])}`]).toMatchObject({
      payload: { principalId: 'jwt:ivy', scope: 'tokens' },
    });
  });

  it('is managed by admins only, and answers 400 to a bad entry', async () => {
    const runner = await token({ sub: 'gina', roles: ['runner', 'approver', 'viewer'] });
    expect((await http('GET', '/v1/revocations', runner)).status).toBe(403);
    expect((await http('POST', '/v1/revocations', runner, { subject: 'x' })).status).toBe(403);
    const admin = await token({ sub: 'root-admin-3' });
    const bad = await http('POST', '/v1/revocations', admin, { subject: '', issuedBefore: 'yesterday', tenant: 'x' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/subject/);
    expect(JSON.stringify(bad.body)).toMatch(/issuedBefore/);
    expect((await http('POST', '/v1/revocations', admin, { subject: 'nul\u0000' })).status).toBe(400);
  });

  it("keeps tenants apart: another tenant's admin neither sees nor removes an entry", async () => {
    const acmeAdmin = await token({ sub: 'root-admin-4' });
    const globexAdmin = await token({ tenant: 'globex', sub: 'root-admin-4' });
    const entry = await revoke(acmeAdmin, { subject: 'henry' });
    const listed = (await http('GET', '/v1/revocations', globexAdmin)).body as { revocations: { id: string }[] };
    expect(listed.revocations.map((r) => r.id)).not.toContain(entry.id);
    const removed = await http('DELETE', `/v1/revocations/${entry.id}`, globexAdmin);
    const unknown = await http('DELETE', '/v1/revocations/00000000-0000-4000-8000-000000000000', globexAdmin);
    expect(removed.status).toBe(404);
    expect(strip(removed.body)).toEqual(strip(unknown.body));
    // Globex revoking its own "henry" is its own entry, not acme's.
    await revoke(globexAdmin, { subject: 'henry' });
    const acme = (await http('GET', '/v1/revocations', acmeAdmin)).body as { revocations: { id: string }[] };
    expect(acme.revocations.map((r) => r.id)).toContain(entry.id);
    const stored = await new JwtRevocationsRepository(db.sql).forSubject('acme', 'henry');
    expect(stored.map((r) => r.id)).toEqual([entry.id]);
  });

  it('answers the principals check: invalid for a revoked subject, unmanaged otherwise', async () => {
    const admin = await token({ sub: 'root-admin-5' });
    expect(await checkPrincipal('acme', 'jwt:ivan')).toEqual({ ok: true, status: 'unmanaged' });
    const before = new Date(Date.now() - 60_000).toISOString();
    const entry = await revoke(admin, { subject: 'ivan', jti: 'one-token' });
    // A narrowed entry: the run started before it was added loses its standing, a later run keeps it.
    expect(await checkPrincipal('acme', 'jwt:ivan', before)).toMatchObject({ ok: true, status: 'invalid' });
    const later = new Date(Date.parse(entry.createdAt) + 1000).toISOString();
    expect(await checkPrincipal('acme', 'jwt:ivan', later)).toEqual({ ok: true, status: 'unmanaged' });
    // Another tenant's entry does not count.
    expect(await checkPrincipal('globex', 'jwt:ivan', before)).toEqual({ ok: true, status: 'unmanaged' });
    await revoke(admin, { subject: 'ivan' });
    const whole = await checkPrincipal('acme', 'jwt:ivan', later);
    expect(whole).toMatchObject({ ok: true, status: 'invalid' });
    expect(whole.ok && whole.reason).toMatch(/^the JWT subject ivan was revoked by entry /);
  });
});
