import { randomBytes } from 'node:crypto';
import type { JetStreamManager, NatsConnection } from 'nats';
import { subjects } from '@ratchet/contracts';
import type { OutboxStore, PendingOutboxMessage } from '@ratchet/domain';
import { connectNats, declareTopology, deleteTopology, ensureTopology, JetStreamPublisher } from '@ratchet/adapters';
import { OutboxRelay } from './outbox.relay';

jest.setTimeout(30_000);

const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const suffix = randomBytes(3).toString('hex');
const prefix = `toutbox${suffix}`;
const topology = declareTopology({ subjectPrefix: prefix, streamPrefix: `TOUTBOX_${suffix}` });
const events = `TOUTBOX_${suffix}_EVENTS`;

/** In-file fake of the relay's store; `crashBeforeMarking` simulates dying between publish and commit. */
class FakeOutboxStore implements OutboxStore {
  rows: (PendingOutboxMessage & { sent: boolean })[] = [];
  crashBeforeMarking = false;
  add(id: string, subject: string, payload: unknown, headers: Record<string, string> = {}) {
    this.rows.push({ id, subject, payload, headers, createdAt: new Date(), attempts: 0, sent: false });
  }
  async relayBatch(
    limit: number,
    publish: (m: PendingOutboxMessage) => Promise<void>,
    ids?: string[],
  ): Promise<number> {
    const batch = this.rows.filter((r) => !r.sent && (!ids || ids.includes(r.id))).slice(0, limit);
    const sent: typeof batch = [];
    for (const r of batch) {
      try {
        await publish(r);
        sent.push(r);
      } catch {
        // stays unsent
      }
    }
    if (this.crashBeforeMarking) throw new Error('process died before the transaction committed');
    sent.forEach((r) => (r.sent = true));
    return sent.length;
  }
  async markSent(ids: readonly string[]): Promise<void> {
    this.rows.filter((r) => ids.includes(r.id)).forEach((r) => (r.sent = true));
  }
  async renewLease(): Promise<void> {}
  async releaseLease(): Promise<void> {}
  async prune(): Promise<number> {
    return 0;
  }
  async lag() {
    return { unsent: this.rows.filter((r) => !r.sent).length, oldestCreatedAt: null };
  }
}

describe('OutboxRelay with the real JetStream publisher', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    nc = await connectNats({ url, name: 'outbox-relay-int-spec' });
    jsm = await nc.jetstreamManager();
    await ensureTopology(jsm, topology, []);
  });
  afterAll(async () => {
    await deleteTopology(jsm, topology);
    await nc.close();
  });

  it('publishes rows with Nats-Msg-Id = row id, and a republish after a crash is deduplicated', async () => {
    const store = new FakeOutboxStore();
    const errors: string[] = [];
    const relay = new OutboxRelay(store, new JetStreamPublisher(nc), {
      onError: (_e, what) => errors.push(what),
    });
    const subject = subjects(prefix).events('acme', 'th-1');
    store.add('evt-1', subject, { v: 1 }, { traceparent: '00-aa-bb-01' });
    store.add('evt-2', subject, { v: 2 });

    store.crashBeforeMarking = true;
    expect(await relay.flush(['evt-1', 'evt-2'])).toBe(0); // published, but the "commit" failed
    expect(errors).toHaveLength(1);
    expect((await jsm.streams.info(events)).state.messages).toBe(2);

    store.crashBeforeMarking = false;
    expect(await relay.sweep()).toBe(2); // the sweeper relays them again…
    expect((await jsm.streams.info(events)).state.messages).toBe(2); // …and JetStream drops the duplicates
    const first = await jsm.streams.getMessage(events, { seq: 1 });
    expect(first.header.get('Nats-Msg-Id')).toBe('evt-1');
    expect(first.header.get('traceparent')).toBe('00-aa-bb-01');
    expect(first.json()).toEqual({ v: 1 });
    await relay.stop();
  });

  it('leaves rows unsent while no stream takes their subject, and relays them once one does', async () => {
    const store = new FakeOutboxStore();
    const relay = new OutboxRelay(store, new JetStreamPublisher(nc, { timeoutMs: 500 }), {
      intervalMs: 50,
      onError: () => {},
    });
    const lateSubject = `${prefix}late.x`;
    store.add('late-1', lateSubject, { late: true });
    expect(await relay.flush(['late-1'])).toBe(0);
    expect(store.rows[0]?.sent).toBe(false);
    relay.start();
    await jsm.streams.add({ name: `TOUTBOX_${suffix}_LATE`, subjects: [`${prefix}late.>`] });
    try {
      const until = Date.now() + 5_000;
      while (!store.rows[0]?.sent && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(store.rows[0]?.sent).toBe(true);
    } finally {
      await relay.stop();
      await jsm.streams.delete(`TOUTBOX_${suffix}_LATE`);
    }
  });
});
