import { randomBytes } from 'node:crypto';
import type { NatsConnection } from 'nats';
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
    const publisher = new JetStreamPublisher(nc.jetstream());
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
    const publisher = new JetStreamPublisher(nc.jetstream());
    const r = await publisher.publish(`${prefix}.events.t1.th2`, 1, {
      msgId: 'm-3',
      headers: { 'Nats-Msg-Id': 'stale' },
    });
    const stored = await (await nc.jetstreamManager()).streams.getMessage(`TPUB_${suffix}_EVENTS`, { seq: r.seq });
    expect(stored.header.values('Nats-Msg-Id')).toEqual(['m-3']);
  });

  it('throws a TransientError when no stream takes the subject', async () => {
    const publisher = new JetStreamPublisher(nc.jetstream(), { timeoutMs: 1000 });
    const error = await publisher.publish(`${prefix}-nostream.x`, {}, { msgId: 'm-x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).code).toBe('nats.no_responders');
  });

  it('throws a TransientError once the connection is closed', async () => {
    const c = await connectNats({ url, name: 'publisher-int-spec-closed' });
    const publisher = new JetStreamPublisher(c.jetstream());
    await c.close();
    const error = await publisher.publish(`${prefix}.events.t1.th1`, {}, { msgId: 'm-y' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
  });

  it('refuses a payload that is not JSON', async () => {
    const publisher = new JetStreamPublisher(nc.jetstream());
    await expect(publisher.publish(`${prefix}.events.t1.th1`, undefined, { msgId: 'm-z' })).rejects.toThrow(/not JSON/);
  });
});
