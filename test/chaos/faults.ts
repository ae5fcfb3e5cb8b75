import {
  createConnection,
  createServer as createTcpServer,
  type AddressInfo,
  type Server as TcpServer,
  type Socket,
} from 'node:net';
import type { Database } from '@ratchet/adapters';
import { PrivateNats, sleep } from '../bench/harness';
import { NatsCluster } from '../e2e/nats-cluster';
import type { PrivatePostgres } from './private-postgres';

/*
 * The faults the chaos driver and the soak inject, and how their own checks outlive them: the NATS they
 * run on (one server behind a delay proxy, or a 3-node cluster), the loop that SIGKILLs processes,
 * crashes nats-server and Postgres and delays messages, and database access retried across a restart.
 */

/** A TCP proxy in front of nats-server that can hold traffic back (order kept per connection). */
export class DelayProxy {
  delayMs = 0;
  private server!: TcpServer;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly upstreamPort: number) {}

  async start(): Promise<void> {
    this.server = createTcpServer((client) => this.pipe(client));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private pipe(client: Socket): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.upstreamPort });
    this.sockets.add(client).add(upstream);
    const forward = (from: Socket, to: Socket) => {
      let chain = Promise.resolve();
      from.on('data', (chunk) => {
        const delay = this.delayMs > 0 ? this.delayMs * (0.5 + Math.random()) : 0;
        chain = chain.then(async () => {
          if (delay > 0) await sleep(delay);
          if (!to.destroyed) to.write(chunk);
        });
      });
    };
    forward(client, upstream);
    forward(upstream, client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** The NATS the chaos runs on, and the fault it injects into it. */
export interface ChaosBus {
  /** For the harness's own connection. */
  url: string;
  /** What the services are given as NATS_URL. */
  serviceUrl: string;
  env: Record<string, string>;
  /** Present for a single server: holds traffic back for delay bursts. */
  proxy?: DelayProxy;
  /** SIGKILLs a server (a node) and brings it back; says what it did. */
  crash(random: () => number): Promise<string>;
  stop(): Promise<void>;
}

export async function singleBus(): Promise<ChaosBus> {
  const nats = await PrivateNats.start();
  const proxy = new DelayProxy(nats.port);
  await proxy.start();
  return {
    url: nats.url,
    serviceUrl: `nats://127.0.0.1:${proxy.port}`,
    env: {},
    proxy,
    crash: async (random) => {
      await nats.kill('SIGKILL');
      await sleep(200 + random() * 800);
      await nats.restart();
      return 'nats-server SIGKILLed and restarted';
    },
    stop: async () => {
      await proxy.stop();
      await nats.stop();
    },
  };
}

/** A 3-node cluster (the cluster test's helper), streams R3; the services know every node. */
export async function clusterBus(): Promise<ChaosBus> {
  const cluster = await NatsCluster.start(3);
  return {
    url: cluster.url,
    serviceUrl: cluster.url,
    env: { RATCHET_STREAM_REPLICAS: '3' },
    crash: async (random) => {
      const node = cluster.nodes[Math.floor(random() * cluster.nodes.length)] ?? cluster.nodes[0]!;
      await node.kill('SIGKILL');
      await sleep(200 + random() * 800);
      await cluster.restart(node.name);
      return `nats node ${node.name} SIGKILLed and brought back (cluster of ${cluster.nodes.length})`;
    },
    stop: () => cluster.stop(),
  };
}

/** A process the fault loop may SIGKILL: it is brought back in the background by `restart`. */
export interface Victim {
  name: string;
  kill(): Promise<void>;
  restart(): Promise<void>;
}

export interface FaultOptions {
  random: () => number;
  bus: ChaosBus;
  postgres: PrivatePostgres;
  victims: readonly Victim[];
  /** SIGKILLs at least this many processes before the loop may stop. */
  minKills: number;
  /** Crash nats-server (a node) at times; and at least `minNatsRestarts` times. */
  natsRestarts: boolean;
  minNatsRestarts: number;
  /** Crash Postgres at times; and at least `minPostgresRestarts` times. */
  postgresRestarts: boolean;
  minPostgresRestarts: number;
  log: (line: string) => void;
}

/**
 * Every 0.25–0.9 s (from `random`, so a seed replays the schedule): SIGKILL a random victim and restart
 * it in the background; SIGKILL nats-server (a node) and restart it (8 %, at most every 5 s); SIGKILL the
 * Postgres postmaster, wait 200–1000 ms and restart it (8 %, at most every 8 s); or delay every message
 * through the proxy by 20–200 ms for 0.5–2.5 s. `stop()` waits until the minimum counts were reached,
 * ends the loop and waits for the restarts under way.
 */
export class FaultLoop {
  readonly actions: Record<string, number> = {
    'SIGKILL service': 0,
    'restart nats-server': 0,
    'restart postgres': 0,
    'delay burst': 0,
  };
  readonly killed: Record<string, number> = {};
  private readonly restarting = new Map<string, Promise<void>>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly o: FaultOptions) {
    this.loop = this.run();
  }

  /** Restarts `victim` (tracked: the loop does not kill it meanwhile, and `stop` waits for it). */
  restart(victim: Victim): Promise<void> {
    const work = victim.restart().finally(() => this.restarting.delete(victim.name));
    this.restarting.set(victim.name, work);
    return work;
  }

  private owedDone(): boolean {
    const a = this.actions;
    return (
      a['SIGKILL service']! >= this.o.minKills &&
      a['restart postgres']! >= (this.o.postgresRestarts ? this.o.minPostgresRestarts : 0) &&
      a['restart nats-server']! >= (this.o.natsRestarts ? this.o.minNatsRestarts : 0)
    );
  }

  async stop(): Promise<void> {
    while (!this.owedDone()) await sleep(200);
    this.running = false;
    await this.loop;
    if (this.o.bus.proxy) this.o.bus.proxy.delayMs = 0;
    await Promise.all(this.restarting.values());
  }

  private async run(): Promise<void> {
    const { random, bus, postgres, log } = this.o;
    const a = this.actions;
    let lastNatsRestart = Date.now();
    let lastPostgresRestart = 0;
    while (this.running) {
      await sleep(250 + random() * 650);
      if (!this.running) break;
      const roll = random();
      const killsDone = a['SIGKILL service']! >= this.o.minKills;
      const natsOwed = killsDone && a['restart nats-server']! < this.o.minNatsRestarts;
      if (this.o.natsRestarts && (roll < 0.08 || natsOwed) && Date.now() - lastNatsRestart > 5000) {
        lastNatsRestart = Date.now();
        a['restart nats-server']!++;
        log(`chaos: ${await bus.crash(random)}`);
        continue;
      }
      // Postgres: rare (8 %), at most every 8 s, and at least `minPostgresRestarts` times before the loop
      // may stop (so a short CI run crashes it too).
      const postgresOwed = killsDone && a['restart postgres']! < this.o.minPostgresRestarts;
      if (
        this.o.postgresRestarts &&
        ((roll >= 0.25 && roll < 0.33) || postgresOwed) &&
        Date.now() - lastPostgresRestart > 8000
      ) {
        a['restart postgres']!++;
        const down = Date.now();
        await postgres.kill('SIGKILL');
        const gone = Date.now();
        await sleep(200 + random() * 800);
        const restarted = Date.now();
        await postgres.restart();
        lastPostgresRestart = Date.now();
        log(
          `chaos: postgres SIGKILLed (its processes gone after ${gone - down} ms), restarted, accepting ` +
            `connections after ${lastPostgresRestart - restarted} ms (crash recoveries so far: ${postgres.recoveries()})`,
        );
        continue;
      }
      if (roll < 0.25 && bus.proxy) {
        const proxy = bus.proxy;
        a['delay burst']!++;
        proxy.delayMs = 20 + random() * 180;
        const ms = 500 + random() * 2000;
        void sleep(ms).then(() => (proxy.delayMs = 0));
        continue;
      }
      const victim = this.o.victims[Math.floor(random() * this.o.victims.length)] ?? this.o.victims[0]!;
      if (this.restarting.has(victim.name)) continue;
      await victim.kill();
      a['SIGKILL service']!++;
      this.killed[victim.name] = (this.killed[victim.name] ?? 0) + 1;
      // In the background, so kills keep coming while it boots.
      void this.restart(victim).catch((error: unknown) =>
        log(`chaos: ${victim.name} did not restart: ${String(error)}`),
      );
    }
  }
}

/** Retries `work` while Postgres is unreachable or restarting (connection errors only), up to `timeoutMs`. */
export async function surviving<T>(work: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionError(error) || Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}

function isConnectionError(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  // 08xxx: connection exceptions; 57P01-57P03: shut down, crash, "the database system is starting up".
  if (typeof code === 'string' && (/^(08|57P0)/.test(code) || /^E(CONNREFUSED|CONNRESET|PIPE)$/.test(code))) {
    return true;
  }
  return /connection|terminat|ECONNREFUSED|cannot connect|timeout/i.test(String(message));
}

/** The same database, its statements retried on connection errors (a dead pooled connection is replaced). */
export function resilient(db: Database): Database {
  const sql = db.sql;
  return {
    ...db,
    sql: {
      schema: sql.schema,
      table: (name) => sql.table(name),
      query: (text, params) => surviving(() => sql.query(text, params)),
      run: (text, params) => surviving(() => sql.run(text, params)),
      prepared: (name, text, values) => surviving(() => sql.prepared(name, text, values)),
    },
  };
}
