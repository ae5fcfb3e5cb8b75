import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  openServiceDatabase,
  verifyWebhook,
  WEBHOOK_HEADERS,
  WebhookDeliveriesRepository,
  type Database,
} from '@ratchet/adapters';
import { createLogger } from '@ratchet/platform';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import { WebhookSender } from './webhook-sender';

/*
 * Secret rotation with an overlap, against a real receiver: during the overlap every delivery carries a
 * signature by the new secret and one by the previous, so a receiver still on the old secret and one
 * already on the new one both verify it; after the overlap only the new secret signs.
 */
let testDb: TestDatabase;
let db: Database;
let server: Server;
let port = 0;
const got: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server?.close();
  await db?.close();
  await testDb?.drop();
});

const T0 = Date.parse('2027-06-01T12:00:00.000Z');
let nowMs = T0;
const clock = { now: () => new Date(nowMs) };
const iso = (ms: number) => new Date(ms).toISOString();
const repo = () => new WebhookDeliveriesRepository(db.sql);

async function deliver(tenantId: string, id: string) {
  await repo().record({ tenantId, deliveryId: id, url: `http://127.0.0.1:${port}/hook`, body: { id } }, iso(nowMs));
  const sender = new WebhookSender(db, clock, createLogger('test', 'silent', 'test'), {
    intervalMs: 60_000,
    timeoutMs: 2_000,
    retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 100 },
    allowPrivate: true,
    batch: 10,
  });
  const before = got.length;
  expect(await sender.pass()).toBe(1);
  await sender.stop();
  expect(got.length).toBe(before + 1);
  const r = got.at(-1)!;
  const signature = String(r.headers[WEBHOOK_HEADERS.signature.toLowerCase()]);
  const timestamp = String(r.headers[WEBHOOK_HEADERS.timestamp.toLowerCase()]);
  const verifies = (secret: string) => verifyWebhook(secret, { timestamp, signature }, r.body, clock.now());
  return { signatures: signature.split(' '), verifies };
}

describe('webhook secret rotation', () => {
  it('during the overlap both secrets sign (new first); after it only the new one', async () => {
    const first = await repo().secret('acme', () => 'whsec_first');
    expect(first).toBe('whsec_first');
    const before = await deliver('acme', 'd-before');
    expect(before.signatures).toHaveLength(1);

    const rotated = await repo().rotate('acme', 'whsec_second', iso(T0 + 3_600_000), iso(nowMs));
    expect(rotated).toEqual({ current: 'whsec_second', previous: 'whsec_first', previousUntil: iso(T0 + 3_600_000) });

    nowMs = T0 + 60_000;
    const during = await deliver('acme', 'd-during');
    expect(during.signatures).toHaveLength(2);
    expect([during.verifies('whsec_second'), during.verifies('whsec_first')]).toEqual([true, true]);
    expect(during.verifies('whsec_other')).toBe(false);
    // The first signature is the new secret's: a receiver that reads one can read the first.
    expect(
      verifyWebhook(
        'whsec_second',
        { timestamp: String(Math.floor(nowMs / 1000)), signature: during.signatures[0]! },
        JSON.stringify({ id: 'd-during' }),
        clock.now(),
      ),
    ).toBe(true);

    nowMs = T0 + 3_600_001;
    const after = await deliver('acme', 'd-after');
    expect(after.signatures).toHaveLength(1);
    expect([after.verifies('whsec_second'), after.verifies('whsec_first')]).toEqual([true, false]);
    expect(await repo().secrets('acme', () => 'unused', iso(nowMs))).toEqual({ current: 'whsec_second' });
  });

  it('a rotation without overlap stops the old secret at once; a second rotation keeps only the one before it', async () => {
    const now = iso(nowMs);
    expect(await repo().rotate('acme', 'whsec_third', now, now)).toEqual({ current: 'whsec_third' });
    const d = await deliver('acme', 'd-no-overlap');
    expect([d.signatures.length, d.verifies('whsec_third'), d.verifies('whsec_second')]).toEqual([1, true, false]);

    const later = iso(nowMs + 86_400_000);
    await repo().rotate('acme', 'whsec_fourth', later, now);
    expect(await repo().rotate('acme', 'whsec_fifth', later, now)).toEqual({
      current: 'whsec_fifth',
      previous: 'whsec_fourth',
      previousUntil: later,
    });
  });

  it("a tenant's rotation leaves other tenants' secrets alone; a first rotation has no previous secret", async () => {
    expect(await repo().secret('beta', () => 'whsec_beta')).toBe('whsec_beta');
    expect(await repo().rotate('gamma', 'whsec_gamma', iso(nowMs + 1000), iso(nowMs))).toEqual({
      current: 'whsec_gamma',
    });
    expect(await repo().secrets('beta', () => 'unused', iso(nowMs))).toEqual({ current: 'whsec_beta' });
  });
});
