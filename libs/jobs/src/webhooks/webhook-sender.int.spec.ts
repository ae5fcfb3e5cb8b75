import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openServiceDatabase, WebhookDeliveriesRepository, type Database } from '@ratchet/adapters';
import { createLogger } from '@ratchet/platform';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import { WebhookSender } from './webhook-sender';

/*
 * The sender checks the address each connection uses, with the egress rules of `http.request`: a
 * receiver whose public-looking name resolves inside the deployment (a resolver that answers
 * 127.0.0.1, as a rebinding DNS server would after the name was accepted) is refused without a byte
 * sent, and the delivery is dead at once with the reason. WEBHOOK_ALLOW_PRIVATE lets the receiver be
 * reached.
 */
let testDb: TestDatabase;
let db: Database;
let server: Server;
let port = 0;
let received = 0;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
  server = createServer((req, res) => {
    received++;
    req.resume();
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server?.close();
  await db?.close();
  await testDb?.drop();
});

const clock = { now: () => new Date() };
const rebinding = (_host: string, callback: (e: Error | null, a: { address: string; family: number }[]) => void) =>
  callback(null, [{ address: '127.0.0.1', family: 4 }]);
const options = (allowPrivate: boolean) => ({
  resolve: rebinding,
  intervalMs: 60_000,
  timeoutMs: 2_000,
  retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 },
  allowPrivate,
  batch: 10,
});

async function deliverOnce(id: string, host: string, allowPrivate: boolean) {
  const repo = new WebhookDeliveriesRepository(db.sql);
  await repo.record(
    { tenantId: 'acme', deliveryId: id, url: `http://${host}:${port}/hook`, body: { id } },
    new Date().toISOString(),
  );
  const sender = new WebhookSender(db, clock, createLogger('test', 'silent', 'test'), options(allowPrivate));
  expect(await sender.pass()).toBe(1);
  await sender.stop();
  return (await repo.list('acme', { limit: 10 })).find((d) => d.deliveryId === id)!;
}

describe('webhook sender egress', () => {
  it('refuses a receiver whose name resolves inside the deployment, sending nothing; the delivery is dead with why', async () => {
    const before = received;
    const d = await deliverOnce('inside-1', 'hooks.example.com', false);
    expect(received).toBe(before);
    expect(d).toMatchObject({ status: 'dead', attempts: 1 });
    expect(d.lastError).toContain('an address inside the deployment');
  });

  it('reaches the same receiver when the deployment allows private receivers', async () => {
    const before = received;
    const d = await deliverOnce('inside-2', '127.0.0.1', true);
    expect(received).toBe(before + 1);
    expect(d).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});
