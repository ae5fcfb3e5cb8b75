import { openServiceDatabase, type Database } from '@ratchet/adapters';
import { feedEvents, type ThreadEvent } from '@ratchet/contracts';
import { AckPolicy, DeliverPolicy, nanos, type JsMsg } from 'nats';
import { NatsCluster } from './nats-cluster';
import { ledgerEffects } from '@ratchet/testing';
import { TestStack } from './stack';

/**
 * Ratchet on a 3-node JetStream cluster (streams R3), services given every node's URL. While runs are
 * in flight one node is SIGKILLed and brought back — in one test any node, in the other the node
 * leading the command stream (tool and model calls) — and every run still completes once: the log of
 * each thread is whole (versions 1..n, one terminal event), the event feed on NATS holds each event
 * exactly once, and every tool effect ran once.
 */
const KEY = 'rk_e2e_nats_cluster_key';
const TENANT = 'cluster';
const RUNS = 24;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

describe('a 3-node NATS cluster loses a node while runs are in flight', () => {
  let cluster: NatsCluster;
  let stack: TestStack;
  let tools: Database;
  let gatewayPort: number;

  beforeEach(async () => {
    cluster = await NatsCluster.start(3);
    stack = await TestStack.create({ natsUrl: cluster.url });
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
    const env = { RATCHET_STREAM_REPLICAS: '3' };
    const [gateway] = await Promise.all([
      stack.start('gateway', { ...env, GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: TENANT }),
      stack.start('orchestrator', env),
      stack.start('tool-executor', env),
    ]);
    gatewayPort = gateway.port;
  });

  afterEach(async () => {
    await tools.close();
    await stack.stop().catch(() => undefined);
    await cluster.stop();
  });

  /** POST /v1/runs as a client does: on a 5xx or a dropped connection, again with the same key. */
  const post = async (i: number): Promise<{ runId: string; threadId: string }> => {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await fetch(`http://127.0.0.1:${gatewayPort}/v1/runs`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${KEY}`,
            'content-type': 'application/json',
            'idempotency-key': `cluster-${i}`,
          },
          body: JSON.stringify({ agent: 'demo', input: `What is the weather in Oslo and in town ${i}?` }),
          signal: AbortSignal.timeout(15_000),
        });
        if (res.status === 202) return (await res.json()) as { runId: string; threadId: string };
        if (res.status < 500 || attempt >= 20)
          throw new Error(`POST /v1/runs answered ${res.status}: ${await res.text()}`);
      } catch (error) {
        if (attempt >= 20) throw error;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  };

  /** The events on the tenant's decision feed (v2), read back from the (R3) events stream. */
  const feed = async (): Promise<ThreadEvent[]> => {
    const stream = `${stack.prefix.stream}_EVENTS`;
    const jsm = await stack.nc.jetstreamManager();
    const created = await jsm.consumers.add(stream, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${stack.prefix.subject}.feed.${TENANT}.>`,
      inactive_threshold: nanos(60_000),
    });
    const consumer = await stack.nc.jetstream().consumers.get(stream, created.name);
    const out: ThreadEvent[] = [];
    let pending = created.num_pending;
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, 500), expires: 5_000 });
      let got = 0;
      for await (const m of batch as AsyncIterable<JsMsg>) {
        out.push(...feedEvents(m.json(), m.subject));
        got++;
      }
      if (got === 0) break;
      pending -= got;
    }
    await jsm.consumers.delete(stream, created.name);
    return out;
  };

  async function runThrough(kill: () => Promise<string>): Promise<string> {
    const runs: Array<{ runId: string; threadId: string }> = [];
    let killed = '';
    let restarted: Promise<void> | undefined;
    for (let i = 0; i < RUNS; i++) {
      runs.push(await post(i));
      if (i === RUNS / 3) {
        killed = await kill();
        // Down for a while: the others carry the streams (R3 keeps a quorum of 2).
        restarted = new Promise((r) => setTimeout(r, 2_000)).then(() => cluster.restart(killed));
      }
      await new Promise((r) => setTimeout(r, 50));
    }

    await restarted;
    const logs = new Map<string, ThreadEvent[]>();
    for (const r of runs) {
      logs.set(
        r.threadId,
        await stack.waitFor(
          TENANT,
          r.threadId,
          (ev) => ev.some((e) => e.runId === r.runId && TERMINAL.has(e.type)),
          60_000,
        ),
      );
    }
    await cluster.waitJetStream();
    const ids = new Set<string>();
    let expected = 0;
    for (const r of runs) {
      const events = logs.get(r.threadId)!;
      expected += events.length;
      for (const e of events) ids.add(e.id);
      expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
      expect([r.runId, events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)]).toEqual([
        r.runId,
        ['run.completed'],
      ]);
      const calls = (type: string) =>
        events
          .filter((e) => e.type === type)
          .map((e) => (e.data as { callId: string }).callId)
          .sort();
      expect(calls('tool.completed')).toEqual(calls('tool.requested'));
    }
    // Every committed event reached the feed exactly once (the outbox's Nats-Msg-Id survived the failover).
    await stack.outboxSettled(30_000);
    const published = await feed();
    const counts = new Map<string, number>();
    for (const e of published) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
    expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect([...ids].filter((id) => !counts.has(id))).toEqual([]);
    expect(published.length).toBe(expected);
    // No effect ran twice.
    const effects = await ledgerEffects(tools.sql, TENANT);
    expect(effects.length).toBeGreaterThanOrEqual(RUNS);
    expect(effects.filter((e) => e.attempts !== 1 || e.state !== 'succeeded')).toEqual([]);
    return killed;
  }

  it('any node SIGKILLed and brought back: every run completes once, no event lost or doubled', async () => {
    const killed = await runThrough(async () => {
      const node = cluster.nodes[1]!;
      await node.kill('SIGKILL');
      return node.name;
    });
    process.stdout.write(`nats cluster: ${RUNS} runs completed across the loss of ${killed}\n`);
  });

  it("the command stream's leader SIGKILLed and brought back: every run completes once, no event lost or doubled", async () => {
    const led: string[] = [];
    const killed = await runThrough(async () => {
      const jsm = await stack.nc.jetstreamManager();
      const leader = (await jsm.streams.info(`${stack.prefix.stream}_COMMANDS`)).cluster?.leader;
      if (!leader) throw new Error('the command stream has no leader');
      for (const suffix of ['REQUESTS', 'INBOX', 'COMMANDS', 'EVENTS']) {
        const info = await jsm.streams.info(`${stack.prefix.stream}_${suffix}`);
        expect(info.config.num_replicas).toBe(3);
        if (info.cluster?.leader === leader) led.push(suffix);
      }
      await cluster.node(leader).kill('SIGKILL');
      return leader;
    });
    process.stdout.write(
      `nats cluster: ${RUNS} runs completed across the loss of ${killed}, leader of ${led.join(', ')}\n`,
    );
  });
});
