import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@ratchet/testing';
import { connect, type NatsConnection } from 'nats';
import { TransientError } from '@ratchet/domain';
import { connectNats } from './connect';
import { JetStreamPublisher } from './jetstream.publisher';
import { declareTopology, deleteTopology, ensureTopology, type Topology } from './jetstream.topology';

const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const suffix = randomBytes(3).toString('hex');
const prefix = `tpub${suffix}`;

describe('JetStreamPublisher', () => {
  let nc: NatsConnection;
  let topology: Topology;
  beforeAll(async () => {
    nc = await connectNats({ url, name: 'publisher-int-spec' });
    topology = declareTopology({ subjectPrefix: prefix, streamPrefix: `TPUB_${suffix}` });
    await ensureTopology(await nc.jetstreamManager(), topology, []);
  });
  afterAll(async () => {
    await deleteTopology(await nc.jetstreamManager(), topology);
    await nc.close();
  });

  it('publishes JSON with headers and dedups by msgId', async () => {
    const publisher = new JetStreamPublisher(nc);
    const subject = `${prefix}.events.t1.th1`;
    const first = await publisher.publish(
      subject,
      { hello: 'world' },
      { msgId: 'm-1', headers: { traceparent: '00-abc-def-01' } },
    );
    expect(first.duplicate).toBe(false);
    const again = await publisher.publish(subject, { hello: 'world' }, { msgId: 'm-1' });
    expect(again).toEqual({ seq: first.seq, duplicate: true });
    const other = await publisher.publish(subject, { hello: 'again' }, { msgId: 'm-2' });
    expect(other.duplicate).toBe(false);
    expect(other.seq).toBe(first.seq + 1);

    const jsm = await nc.jetstreamManager();
    const stored = await jsm.streams.getMessage(`TPUB_${suffix}_EVENTS`, { seq: first.seq });
    expect(stored.json()).toEqual({ hello: 'world' });
    expect(stored.header.get('Nats-Msg-Id')).toBe('m-1');
    expect(stored.header.get('traceparent')).toBe('00-abc-def-01');
  });

  it('lets msgId win over a Nats-Msg-Id in the headers', async () => {
    const publisher = new JetStreamPublisher(nc);
    const r = await publisher.publish(`${prefix}.events.t1.th2`, 1, {
      msgId: 'm-3',
      headers: { 'Nats-Msg-Id': 'stale' },
    });
    const stored = await (await nc.jetstreamManager()).streams.getMessage(`TPUB_${suffix}_EVENTS`, { seq: r.seq });
    expect(stored.header.values('Nats-Msg-Id')).toEqual(['m-3']);
  });

  it('throws a TransientError when no stream takes the subject', async () => {
    const publisher = new JetStreamPublisher(nc, { timeoutMs: 1000 });
    const error = await publisher.publish(`${prefix}-nostream.x`, {}, { msgId: 'm-x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).code).toBe('nats.no_responders');
  });

  it('throws a TransientError once the connection is closed', async () => {
    const c = await connectNats({ url, name: 'publisher-int-spec-closed' });
    const publisher = new JetStreamPublisher(c);
    await c.close();
    const error = await publisher.publish(`${prefix}.events.t1.th1`, {}, { msgId: 'm-y' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
  });

  it('matches each ack to its publish when many are in flight at once', async () => {
    const publisher = new JetStreamPublisher(nc);
    const subject = `${prefix}.events.t1.many`;
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => publisher.publish(subject, { i }, { msgId: `many-${i}` })),
    );
    const jsm = await nc.jetstreamManager();
    // Every publish got its own stream sequence, and that sequence holds its own payload.
    expect(new Set(results.map((r) => r.seq)).size).toBe(200);
    for (const i of [0, 57, 199]) {
      const stored = await jsm.streams.getMessage(`TPUB_${suffix}_EVENTS`, { seq: results[i]!.seq });
      expect(stored.json()).toEqual({ i });
      expect(stored.header.get('Nats-Msg-Id')).toBe(`many-${i}`);
    }
  });

  it('throws a TransientError (timeout) when a subscriber that is not a stream never acks', async () => {
    const subject = `${prefix}-silent.${suffix}`;
    const silent = nc.subscribe(subject);
    try {
      const publisher = new JetStreamPublisher(nc, { timeoutMs: 300 });
      const error = await publisher.publish(subject, {}, { msgId: 'm-silent' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientError);
      expect((error as TransientError).code).toBe('nats.timeout');
      // The publish after it is not confused by the first one's missing answer.
      const ok = await publisher.publish(`${prefix}.events.t1.after`, {}, { msgId: 'm-after-silent' });
      expect(ok.duplicate).toBe(false);
    } finally {
      silent.unsubscribe();
    }
  });

  it('fails publishes still waiting for their ack when the connection closes', async () => {
    const c = await connectNats({ url, name: 'publisher-int-spec-closing' });
    const subject = `${prefix}-silent2.${suffix}`;
    c.subscribe(subject);
    const publisher = new JetStreamPublisher(c, { timeoutMs: 60_000 });
    const waiting = publisher.publish(subject, {}, { msgId: 'm-closing' }).catch((e: unknown) => e);
    await c.flush();
    await c.close();
    const error = await waiting;
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).code).toBe('nats.disconnected');
  });

  it("surfaces a stream's refusal as a plain error, not a transient one", async () => {
    const publisher = new JetStreamPublisher(nc);
    const error = await publisher
      .publish(
        `${prefix}.events.t1.th3`,
        {},
        { msgId: 'm-refused', headers: { 'Nats-Expected-Last-Sequence': '999999' } },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(TransientError);
    expect((error as Error).message).toMatch(/wrong last sequence/i);
  });

  it('refuses a payload that is not JSON', async () => {
    const publisher = new JetStreamPublisher(nc);
    await expect(publisher.publish(`${prefix}.events.t1.th1`, undefined, { msgId: 'm-z' })).rejects.toThrow(/not JSON/);
  });
});

describe('JetStreamPublisher on a server that restricts publishing', () => {
  // A private nats-server whose only user may publish on `allowed.>` (and answer inboxes), nothing else.
  let server: ChildProcess;
  let dir: string;
  let nc: NatsConnection;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ratchet-pub-perm-'));
    const port = await freePort();
    writeFileSync(
      path.join(dir, 'nats.conf'),
      `listen: 127.0.0.1:${port}
authorization {
  users = [
    { user: pub, password: secret, permissions: { publish: { allow: ["allowed.>", "_INBOX.>"] }, subscribe: { allow: ["_INBOX.>", "allowed.>"] } } }
  ]
}
`,
    );
    server = spawn(process.env['NATS_SERVER_BIN'] ?? 'nats-server', ['-c', path.join(dir, 'nats.conf')], {
      stdio: 'ignore',
    });
    for (let attempt = 0; ; attempt++) {
      try {
        nc = await connect({ servers: `nats://127.0.0.1:${port}`, user: 'pub', pass: 'secret', noAsyncTraces: true });
        break;
      } catch (error) {
        if (attempt > 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  afterAll(async () => {
    await nc?.close();
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails a publish the server refuses as a refusal at once, not as a missing ack, and keeps working', async () => {
    const publisher = new JetStreamPublisher(nc, { timeoutMs: 30_000 });
    const error = await publisher.publish('denied.x', { n: 1 }, { msgId: 'm-denied' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(TransientError);
    expect((error as Error).message).toMatch(/denied\.x refused by the server: permissions violation/);
    // An allowed subject with no stream behind it still gets the server's 503: the connection is fine.
    const next = await publisher.publish('allowed.x', {}, { msgId: 'm-allowed' }).catch((e: unknown) => e);
    expect((next as TransientError).code).toBe('nats.no_responders');
  });
});
