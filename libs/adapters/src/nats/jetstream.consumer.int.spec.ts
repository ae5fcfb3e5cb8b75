import { randomBytes } from 'node:crypto';
import type { JetStreamManager, NatsConnection } from 'nats';
import { z } from 'zod';
import { PoisonMessageError, TransientError } from '@ratchet/domain';
import { connectNats } from './connect';
import { consume, type ConsumerHandle } from './jetstream.consumer';
import type { ConsumedMessage, PoisonInfo } from './jetstream.settle';
import { JetStreamPublisher } from './jetstream.publisher';
import {
  declareTopology,
  deleteTopology,
  ensureTopology,
  type Topology,
  type TopologyConfig,
} from './jetstream.topology';

const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const run = randomBytes(3).toString('hex');
let counter = 0;
// The int project's testTimeout does not reach a file run on its own (a jest multi-project quirk).
jest.setTimeout(30_000);

describe('consume()', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let topology: Topology;
  let publisher: JetStreamPublisher;
  let handles: ConsumerHandle[];
  let errors: string[];
  let commands: string;
  let toolSubject: string;

  // A fresh topology (own subject prefix and stream names) per test: no test sees another's messages.
  async function fresh(extra: Partial<TopologyConfig> = {}): Promise<void> {
    counter++;
    topology = declareTopology({
      subjectPrefix: `tcons${run}n${counter}`,
      streamPrefix: `TCONS_${run}_${counter}`,
      ackWaitMs: 1_000,
      ...extra,
    });
    await ensureTopology(jsm, topology, ['tool-executor']);
    commands = `TCONS_${run}_${counter}_COMMANDS`;
    toolSubject = `tcons${run}n${counter}.cmd.tool.acme`;
  }

  async function start(
    handler: (m: ConsumedMessage) => Promise<unknown>,
    onPoison: (i: PoisonInfo) => Promise<void> = async () => {},
    maxMessages = 4,
    maxUntypedDeliveries?: number,
    fairShares?: Parameters<typeof consume>[0]['fairShares'],
  ) {
    const h = await consume({
      js: nc.jetstream(),
      stream: commands,
      consumer: 'tool-executor',
      handler,
      onPoison,
      maxMessages,
      ...(maxUntypedDeliveries ? { maxUntypedDeliveries } : {}),
      ...(fairShares ? { fairShares } : {}),
      retryDelay: () => 50,
      pullExpiresMs: 1_000,
      onError: (error, what) => errors.push(`${what}: ${String(error)}`),
    });
    handles.push(h);
    return h;
  }

  const pending = async () => {
    const ci = await jsm.consumers.info(commands, 'tool-executor');
    return { ackPending: ci.num_ack_pending, pending: ci.num_pending, redelivered: ci.num_redelivered };
  };

  beforeAll(async () => {
    nc = await connectNats({ url, name: 'consumer-int-spec' });
    jsm = await nc.jetstreamManager();
    publisher = new JetStreamPublisher(nc);
  });
  beforeEach(() => {
    handles = [];
    errors = [];
  });
  afterEach(async () => {
    await Promise.all(handles.map((h) => h.stop(5_000)));
    await deleteTopology(jsm, topology);
  });
  afterAll(async () => {
    await nc.drain();
  });

  it('acks a message whose handler resolved: delivered once, removed from the work queue', async () => {
    await fresh();
    const seen: ConsumedMessage[] = [];
    await start(async (m) => {
      seen.push(m);
    });
    await publisher.publish(toolSubject, { n: 1 }, { msgId: 'a-1', headers: { traceparent: '00-t-s-01' } });
    await waitFor(() => seen.length === 1);
    await sleep(2_500); // > 2 × ack_wait: an unacked message would be back by now
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      subject: toolSubject,
      data: { n: 1 },
      msgId: 'a-1',
      deliveryCount: 1,
      redeliveryCount: 0,
      headers: { 'Nats-Msg-Id': 'a-1', traceparent: '00-t-s-01' },
    });
    expect(await pending()).toEqual({ ackPending: 0, pending: 0, redelivered: 0 });
    expect((await jsm.streams.info(commands)).state.messages).toBe(0);
  });

  it('naks on a TransientError and redelivers with a growing redeliveryCount', async () => {
    await fresh();
    const counts: number[] = [];
    await start(async (m) => {
      counts.push(m.redeliveryCount);
      if (m.redeliveryCount < 3) throw new TransientError('db down');
    });
    await publisher.publish(toolSubject, { n: 2 }, { msgId: 'b-1' });
    await waitFor(() => counts.length === 4);
    await sleep(1_500);
    expect(counts).toEqual([0, 1, 2, 3]);
    expect(await pending()).toMatchObject({ ackPending: 0, pending: 0 });
  });

  it('records a poison message once and terms it', async () => {
    await fresh();
    const poisoned: PoisonInfo[] = [];
    let calls = 0;
    await start(
      async () => {
        calls++;
        throw new PoisonMessageError('refers to nothing');
      },
      async (info) => {
        poisoned.push(info);
      },
    );
    await publisher.publish(toolSubject, { n: 3 }, { msgId: 'c-1' });
    await waitFor(() => poisoned.length === 1);
    await sleep(2_500);
    expect(calls).toBe(1);
    expect(poisoned).toHaveLength(1);
    expect(poisoned[0]).toMatchObject({
      reason: 'handler',
      msgId: 'c-1',
      deliveryCount: 1,
      payload: { n: 3 },
      errorMessage: 'refers to nothing',
    });
    expect(await pending()).toMatchObject({ ackPending: 0, pending: 0 });
  });

  it('treats a payload that is not JSON, and a zod failure, as poison', async () => {
    await fresh();
    const poisoned: PoisonInfo[] = [];
    const handled: unknown[] = [];
    await start(
      async (m) => {
        handled.push(m.data);
        z.object({ kind: z.literal('ok') }).parse(m.data);
      },
      async (info) => {
        poisoned.push(info);
      },
    );
    await nc.jetstream().publish(toolSubject, new TextEncoder().encode('{not json'), { msgID: 'd-1' });
    await publisher.publish(toolSubject, { kind: 'wrong' }, { msgId: 'd-2' });
    await waitFor(() => poisoned.length === 2);
    await sleep(2_000);
    expect(handled).toEqual([{ kind: 'wrong' }]);
    expect(poisoned.map((p) => [p.msgId, p.reason])).toEqual([
      ['d-1', 'parse'],
      ['d-2', 'handler'],
    ]);
    expect(poisoned[0]?.payload).toBe('{not json');
  });

  it('keeps a long handler alive with working() past ack_wait', async () => {
    await fresh();
    let calls = 0;
    await start(async () => {
      calls++;
      await sleep(3_500); // 3.5 × ack_wait
    });
    await publisher.publish(toolSubject, { n: 5 }, { msgId: 'e-1' });
    await waitFor(() => calls === 1);
    await sleep(5_000);
    expect(calls).toBe(1);
    expect(await pending()).toEqual({ ackPending: 0, pending: 0, redelivered: 0 });
  });

  it('stop() stops pulling and lets an in-flight handler finish and ack', async () => {
    await fresh();
    let started = 0;
    let finished = 0;
    const h = await start(async () => {
      started++;
      await sleep(1_500);
      finished++;
    });
    await publisher.publish(toolSubject, { n: 6 }, { msgId: 'f-1' });
    await waitFor(() => started === 1);
    expect(h.inFlight).toBe(1);
    expect(await h.stop(10_000)).toBe(true);
    expect(finished).toBe(1);
    expect(h.inFlight).toBe(0);
    // The ack is a plain ack, sent as the handler finished; the server counts it a moment later.
    for (let i = 0; i < 40 && (await pending()).ackPending > 0; i++) await sleep(50);
    expect(await pending()).toMatchObject({ ackPending: 0, pending: 0 });

    // Stopped means stopped: a message published now stays for the next instance.
    await publisher.publish(toolSubject, { n: 7 }, { msgId: 'f-2' });
    await sleep(1_500);
    expect(started).toBe(1);
    const next: unknown[] = [];
    await start(async (m) => {
      next.push(m.data);
    });
    await waitFor(() => next.length === 1);
    expect(next).toEqual([{ n: 7 }]);
  });

  it('gives up after max_deliver: records the failure and terms', async () => {
    await fresh({ maxDeliver: 3 });
    const counts: number[] = [];
    const poisoned: PoisonInfo[] = [];
    await start(
      async (m) => {
        counts.push(m.deliveryCount);
        throw new Error('always fails');
      },
      async (info) => {
        poisoned.push(info);
      },
    );
    await publisher.publish(toolSubject, { n: 8 }, { msgId: 'g-1' });
    await waitFor(() => poisoned.length === 1);
    await sleep(1_500);
    expect(counts).toEqual([1, 2, 3]);
    expect(poisoned[0]).toMatchObject({ reason: 'max_deliver', deliveryCount: 3, errorMessage: 'always fails' });
  });

  it('gives up on a deterministic database error at once, and on an untyped error after a small bound', async () => {
    await fresh({ maxDeliver: 20 });
    const counts: Record<string, number[]> = { db: [], bug: [], down: [] };
    const poisoned: PoisonInfo[] = [];
    await start(
      async (m) => {
        const kind = (m.data as { kind: string }).kind;
        counts[kind]!.push(m.deliveryCount);
        if (kind === 'db')
          throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
        if (kind === 'bug') throw new TypeError('x is not a function');
        if (m.deliveryCount < 5) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      },
      async (info) => {
        poisoned.push(info);
      },
      4,
      3,
    );
    await publisher.publish(toolSubject, { kind: 'db' }, { msgId: 'p-db' });
    await publisher.publish(toolSubject, { kind: 'bug' }, { msgId: 'p-bug' });
    await publisher.publish(toolSubject, { kind: 'down' }, { msgId: 'p-down' });
    await waitFor(() => poisoned.length === 2 && counts['down']!.length === 5);
    await sleep(500);
    expect(counts).toEqual({ db: [1], bug: [1, 2, 3], down: [1, 2, 3, 4, 5] });
    expect(poisoned.map((p) => [p.msgId, p.reason, p.deliveryCount]).sort()).toEqual([
      ['p-bug', 'handler', 3],
      ['p-db', 'handler', 1],
    ]);
  });

  it('naks instead of terming when onPoison itself fails, so the failure is not lost', async () => {
    await fresh();
    let attempts = 0;
    const recorded: string[] = [];
    await start(
      async () => {
        throw new PoisonMessageError('bad');
      },
      async (info) => {
        attempts++;
        if (attempts < 3) throw new Error('db down');
        recorded.push(info.msgId ?? '');
      },
    );
    await publisher.publish(toolSubject, { n: 9 }, { msgId: 'h-1' });
    await waitFor(() => recorded.length === 1, 10_000);
    expect(attempts).toBe(3);
    expect(errors.filter((e) => e.includes('onPoison failed'))).toHaveLength(2);
  });

  it('runs at most maxMessages handlers at once and processes everything', async () => {
    await fresh();
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    await start(
      async (m) => {
        running++;
        peak = Math.max(peak, running);
        await sleep(100);
        running--;
        done.push((m.data as { i: number }).i);
      },
      undefined,
      2,
    );
    for (let i = 0; i < 10; i++) await publisher.publish(toolSubject, { i }, { msgId: `i-${i}` });
    await waitFor(() => done.length === 10, 10_000);
    expect(peak).toBe(2);
    expect([...done].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  // Tenant "flood" fills the stream with work that does not finish until released; tenant "acme"
  // publishes one message behind all of it.
  async function floodThenOne(fairShares?: Parameters<typeof start>[4]) {
    const floodSubject = toolSubject.replace(/acme$/, 'flood');
    const waiting: (() => void)[] = [];
    let open = false;
    const order: string[] = [];
    const deliveries: number[] = [];
    const h = await start(
      async (m) => {
        const key = m.subject.split('.').pop()!;
        if (key === 'flood') {
          deliveries.push(m.deliveryCount);
          if (!open) await new Promise<void>((resolve) => waiting.push(resolve));
        }
        order.push(`${key}:${(m.data as { i: number }).i}`);
      },
      undefined,
      4,
      undefined,
      fairShares,
    );
    for (let i = 0; i < 20; i++) await publisher.publish(floodSubject, { i }, { msgId: `f-${i}` });
    await publisher.publish(toolSubject, { i: 0 }, { msgId: 'a-0' });
    return {
      h,
      order,
      deliveries,
      waiting,
      releaseAll: () => {
        open = true;
        waiting.splice(0).forEach((r) => r());
      },
    };
  }

  it("with fair shares, runs another tenant's message behind a flood at the first free slot", async () => {
    await fresh();
    const { h, order, deliveries, waiting, releaseAll } = await floodThenOne({
      keyOf: (subject) => subject.split('.').pop(),
      perKeyInFlight: 2,
      perKeyHeld: 3,
    });
    // Alone, the flood uses every slot; the loop pulls on and finds acme's message behind it.
    await waitFor(() => waiting.length === 4 && h.held === 4, 10_000);
    await sleep(2_500); // > 2 × ack_wait: a held message whose ack wait ran out would be delivered again
    waiting.shift()!();
    await waitFor(() => order.includes('acme:0'), 10_000);
    // The first slot that freed went to acme, ahead of the flood's waiting line.
    expect(order).toEqual([expect.stringMatching(/^flood:/), 'acme:0']);
    releaseAll();
    await waitFor(() => order.length === 21, 20_000);
    expect(new Set(order).size).toBe(21);
    // Deferred messages came back, and the deferral is not counted as a failed delivery.
    expect(new Set(deliveries)).toEqual(new Set([1]));
    expect(await pending()).toMatchObject({ ackPending: 0, pending: 0 });
  });

  it('without fair shares, a message behind a flood waits for it', async () => {
    await fresh();
    const { order, releaseAll } = await floodThenOne();
    releaseAll();
    await waitFor(() => order.length === 21, 20_000);
    // First come, first served over 4 slots: at least 16 of the flood finished before acme's turn.
    expect(order.indexOf('acme:0')).toBeGreaterThanOrEqual(16);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting for condition');
    await sleep(20);
  }
}
