import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { nanos, type NatsConnection } from 'nats';
import { connectNats } from './connect';
import {
  CONSUMER_NAMES,
  declareTopology,
  deleteTopology,
  ensureTopology,
  type TopologyConfig,
} from './jetstream.topology';

const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const suffix = randomBytes(3).toString('hex');
jest.setTimeout(30_000);
const base: TopologyConfig = { subjectPrefix: `ttopo${suffix}`, streamPrefix: `TTOPO_${suffix}`, ackWaitMs: 5_000 };

describe('JetStream topology', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connectNats({ url, name: 'topology-int-spec' });
  });
  afterAll(async () => {
    await deleteTopology(await nc.jetstreamManager(), declareTopology(base));
    await nc.close();
  });

  it('describes the streams and consumers purely', () => {
    const t = declareTopology(base);
    expect(t.streams.map((s) => s.config.name)).toEqual([
      `TTOPO_${suffix}_REQUESTS`,
      `TTOPO_${suffix}_INBOX`,
      `TTOPO_${suffix}_COMMANDS`,
      `TTOPO_${suffix}_EVENTS`,
    ]);
    expect(t.streams.find((s) => s.role === 'commands')?.config.subjects).toEqual([`ttopo${suffix}.cmd.>`]);
    const byName = Object.fromEntries(t.consumers.map((c) => [c.name, c]));
    expect(byName['model-worker']?.config.filter_subject).toBe(`ttopo${suffix}.cmd.model.>`);
    expect(byName['tool-executor']?.config.filter_subject).toBe(`ttopo${suffix}.cmd.tool.>`);
    expect(byName['tool-executor']?.config.ack_wait).toBe(nanos(5_000));
    expect(byName['orchestrator-inbox']?.stream).toBe(`TTOPO_${suffix}_INBOX`);
  });

  it('creates, is idempotent, and updates what changed', async () => {
    const jsm = await nc.jetstreamManager();
    const first = await ensureTopology(jsm, declareTopology(base));
    expect(Object.values(first.streams)).toEqual(['created', 'created', 'created', 'created']);
    expect(Object.keys(first.consumers).sort()).toEqual([...CONSUMER_NAMES].sort());
    expect(new Set(Object.values(first.consumers))).toEqual(new Set(['created']));

    const again = await ensureTopology(jsm, declareTopology(base));
    expect(new Set([...Object.values(again.streams), ...Object.values(again.consumers)])).toEqual(
      new Set(['unchanged']),
    );

    const changed = await ensureTopology(
      jsm,
      declareTopology({ ...base, ackWaitMs: 7_000, maxDeliver: 5, eventsMaxAgeMs: 3_600_000 }),
    );
    expect(changed.streams[`TTOPO_${suffix}_EVENTS`]).toBe('updated');
    expect(changed.streams[`TTOPO_${suffix}_COMMANDS`]).toBe('unchanged');
    expect(new Set(Object.values(changed.consumers))).toEqual(new Set(['updated']));
    const ci = await jsm.consumers.info(`TTOPO_${suffix}_COMMANDS`, 'tool-executor');
    expect(ci.config.ack_wait).toBe(nanos(7_000));
    expect(ci.config.max_deliver).toBe(5);
    expect((await jsm.streams.info(`TTOPO_${suffix}_EVENTS`)).config.max_age).toBe(nanos(3_600_000));

    // back to the original config, then stable again
    await ensureTopology(jsm, declareTopology(base));
    const stable = await ensureTopology(jsm, declareTopology(base));
    expect(new Set([...Object.values(stable.streams), ...Object.values(stable.consumers)])).toEqual(
      new Set(['unchanged']),
    );
  });

  it('handles a backoff list without flapping, and removes it again', async () => {
    const jsm = await nc.jetstreamManager();
    const withBackoff = declareTopology({ ...base, backoffMs: [5_000, 10_000, 20_000] });
    const r1 = await ensureTopology(jsm, withBackoff, ['tool-executor']);
    expect(r1.consumers).toEqual({ 'tool-executor': 'updated' });
    const r2 = await ensureTopology(jsm, withBackoff, ['tool-executor']);
    expect(r2.consumers).toEqual({ 'tool-executor': 'unchanged' });
    expect((await jsm.consumers.info(`TTOPO_${suffix}_COMMANDS`, 'tool-executor')).config.backoff).toEqual([
      nanos(5_000),
      nanos(10_000),
      nanos(20_000),
    ]);
    const r3 = await ensureTopology(jsm, declareTopology(base), ['tool-executor']);
    expect(r3.consumers).toEqual({ 'tool-executor': 'updated' });
    expect((await jsm.consumers.info(`TTOPO_${suffix}_COMMANDS`, 'tool-executor')).config.backoff ?? []).toEqual([]);
    const r4 = await ensureTopology(jsm, declareTopology(base), ['tool-executor']);
    expect(r4.consumers).toEqual({ 'tool-executor': 'unchanged' });
  });

  it('is safe to run concurrently from several processes', async () => {
    const jsm = await nc.jetstreamManager();
    await deleteTopology(jsm, declareTopology(base));
    const conns = await Promise.all([1, 2, 3].map((i) => connectNats({ url, name: `topology-int-spec-${i}` })));
    try {
      const results = await Promise.all(
        conns.map(async (c) => ensureTopology(await c.jetstreamManager(), declareTopology(base))),
      );
      const created = results.flatMap((r) => Object.values(r.consumers)).filter((x) => x === 'created');
      expect(created.length).toBeGreaterThanOrEqual(4);
      const after = await ensureTopology(jsm, declareTopology(base));
      expect(new Set([...Object.values(after.streams), ...Object.values(after.consumers)])).toEqual(
        new Set(['unchanged']),
      );
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
  });

  it('ensures only the named consumers, and rejects unknown names', async () => {
    const jsm = await nc.jetstreamManager();
    await deleteTopology(jsm, declareTopology(base));
    const r = await ensureTopology(jsm, declareTopology(base), ['model-worker']);
    expect(Object.keys(r.streams)).toHaveLength(4);
    expect(r.consumers).toEqual({ 'model-worker': 'created' });
    await expect(jsm.consumers.info(`TTOPO_${suffix}_COMMANDS`, 'tool-executor')).rejects.toThrow();
    await expect(ensureTopology(jsm, declareTopology(base), ['nope'])).rejects.toThrow(/unknown consumer/);
  });

  it('refuses to change retention in place with a clear error', async () => {
    const jsm = await nc.jetstreamManager();
    await ensureTopology(jsm, declareTopology(base), []);
    await expect(ensureTopology(jsm, declareTopology({ ...base, workRetention: 'limits' }), [])).rejects.toThrow(
      /retention=workqueue.*cannot change/,
    );
  });
});

describe('connectNats', () => {
  it('names the (redacted) URL and the fix when the server is unreachable', async () => {
    await expect(connectNats({ url: 'nats://alice:s3cret@127.0.0.1:1', name: 'x', timeoutMs: 500 })).rejects.toThrow(
      /nats:\/\/alice:\*\*\*@127\.0\.0\.1:1.*docker compose up -d nats postgres/,
    );
    await expect(
      connectNats({ url: 'nats://alice:s3cret@127.0.0.1:1', name: 'x', timeoutMs: 500 }),
    ).rejects.not.toThrow(/s3cret/);
  });

  const natsServer = ['/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find((p) => existsSync(p));
  (natsServer ? it : it.skip)('says so when the server has no JetStream', async () => {
    const port = await freePort();
    // A second nats-server without -js, started and stopped by this test only.
    const child = spawn(natsServer!, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    try {
      let error: unknown;
      for (let i = 0; i < 50; i++) {
        error = await connectNats({ url: `nats://127.0.0.1:${port}`, name: 'x', timeoutMs: 500 }).then(
          (nc) => nc.close(),
          (e: unknown) => e,
        );
        if (error instanceof Error && /answered/.test(error.message)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(String((error as Error).message)).toMatch(/answered but JetStream is not available.*-js/);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
