import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection, type Subscription } from 'nats';
import {
  declareTopology,
  deleteTopology,
  masterKeyFromFile,
  openServiceDatabase,
  quoteIdent,
  type Database,
} from '@ratchet/adapters';
import { feedEvents, type RunRequestInput, type ThreadEvent } from '@ratchet/contracts';
// Not the package index: it also exports the jest contract suites, which refuse to load outside jest.
// eslint-disable-next-line import/no-relative-packages -- see above
import { freePort, ServiceProcess, type ServiceName } from '../../libs/testing/src/service-process';
// eslint-disable-next-line import/no-relative-packages -- see above
import { createTestDatabase, uniquePrefix, type TestDatabase } from '../../libs/testing/src/test-database';
// eslint-disable-next-line import/no-relative-packages -- see above
import { databaseUrl, newTestDatabaseName, openAdmin } from '../../libs/testing/src/template-database';

/*
 * A whole Ratchet for one bench or chaos run: a fresh database (copied from the migrated template on the
 * shared server, or created empty on a given server such as chaos's private one), a fresh subject/stream
 * prefix, and the services as real OS processes (so they can be SIGKILLed and their peak memory read from
 * /proc). Run requests are published on NATS the way another service would.
 */

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ratchet';
export const TERMINAL_TYPES = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** A private nats-server with JetStream in a temp dir, so chaos can restart it without touching the shared one. */
export class PrivateNats {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly storeDir: string,
  ) {}

  static async start(): Promise<PrivateNats> {
    const n = new PrivateNats(await freePort(), mkdtempSync(path.join(os.tmpdir(), 'ratchet-chaos-nats-')));
    await n.restart();
    return n;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    await this.kill();
    this.child = spawn(
      '/usr/sbin/nats-server',
      ['-a', '127.0.0.1', '-js', '-sd', this.storeDir, '-p', String(this.port)],
      {
        stdio: 'ignore',
      },
    );
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        const nc = await connect({ servers: this.url, timeout: 500 });
        const jsm = await nc.jetstreamManager();
        await jsm.getAccountInfo();
        await nc.close();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`private nats-server did not start: ${(error as Error).message}`);
        await sleep(100);
      }
    }
  }

  /** SIGKILL (default) or SIGTERM; resolves when the process is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

export interface StackOptions {
  natsUrl?: string;
  /** Where the services connect (e.g. a delaying proxy in front of `natsUrl`); default `natsUrl`. */
  serviceNatsUrl?: string;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /**
   * A Postgres server (any database URL on it) to create the fresh database on with a plain
   * `create database`; the services apply their migrations when they start. Default: a copy of the
   * migrated template on DATABASE_URL (the shared server).
   */
  databaseServerUrl?: string;
}

export class Stack {
  readonly services = new Map<string, { service: ServiceName; process: ServiceProcess; env: Record<string, string> }>();
  private readonly terminalWaiters = new Map<string, (e: ThreadEvent) => void>();
  private readonly terminals = new Map<string, ThreadEvent>();
  private feeds: Subscription[] = [];

  private constructor(
    readonly testDb: TestDatabase,
    readonly prefix: { subject: string; stream: string },
    readonly natsUrl: string,
    private readonly serviceNatsUrl: string,
    public nc: NatsConnection,
    readonly orchestratorDb: Database,
    private readonly baseEnv: Record<string, string>,
  ) {}

  static async create(options: StackOptions = {}): Promise<Stack> {
    const natsUrl = options.natsUrl ?? process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
    let testDb: TestDatabase;
    if (options.databaseServerUrl) {
      testDb = await createEmptyDatabase(options.databaseServerUrl);
    } else {
      process.env['DATABASE_URL'] ??= DEFAULT_DATABASE_URL;
      testDb = await createTestDatabase();
    }
    const prefix = uniquePrefix();
    const nc = await connect({ servers: natsUrl.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    // The services seal content when RATCHET_KEY_FILE is set (they inherit it): the harness reads it so.
    const db = await openServiceDatabase(
      testDb.url,
      'orchestrator',
      4,
      masterKeyFromFile(process.env['RATCHET_KEY_FILE']),
    );
    const stack = new Stack(testDb, prefix, natsUrl, options.serviceNatsUrl ?? natsUrl, nc, db, options.env ?? {});
    stack.subscribeFeed();
    return stack;
  }

  get env(): Record<string, string> {
    return {
      DATABASE_URL: this.testDb.url,
      NATS_URL: this.serviceNatsUrl,
      RATCHET_SUBJECT_PREFIX: this.prefix.subject,
      RATCHET_STREAM_PREFIX: this.prefix.stream,
      SHUTDOWN_GRACE_MS: '2000',
      LOG_LEVEL: 'warn',
      ...this.baseEnv,
    };
  }

  async start(service: ServiceName, instance: string = service, extraEnv: Record<string, string> = {}) {
    const env = { ...this.env, SERVICE_INSTANCE_ID: instance, ...extraEnv };
    const proc = await ServiceProcess.start(service, env, { timeoutMs: 120_000 });
    this.services.set(instance, { service, process: proc, env: extraEnv });
    return proc;
  }

  /** SIGKILL then start again with the same environment. */
  async restart(instance: string): Promise<void> {
    const s = this.services.get(instance);
    if (!s) throw new Error(`no service ${instance}`);
    await s.process.kill('SIGKILL');
    await this.start(s.service, instance, s.env);
  }

  /**
   * CPU time so far, ms: the whole machine's busy time (every process: services, Postgres, nats-server,
   * this client) from /proc/stat, and each running service process's own (user + system) from /proc.
   */
  cpuMs(): { machine: number; services: Record<string, number> } {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
    const busy = cpu.slice(0, 8).reduce((a, b, i) => (i === 3 || i === 4 ? a : a + b), 0);
    const services: Record<string, number> = {};
    for (const [name, s] of this.services) {
      const ms = s.process.pid === undefined ? undefined : processCpuMs(s.process.pid);
      if (ms !== undefined) services[name] = ms;
    }
    // The servers this machine runs for everyone (all their processes), and this client.
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      const comm = processComm(pid);
      if (comm !== 'postgres' && comm !== 'nats-server') continue;
      services[comm] = (services[comm] ?? 0) + (processCpuMs(pid) ?? 0);
    }
    const self = process.cpuUsage();
    services['bench client'] = (self.user + self.system) / 1000;
    return { machine: busy * MS_PER_TICK, services };
  }

  /** Peak resident set (VmHWM, kB) per running service instance, from /proc. */
  peakMemoryKb(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, s] of this.services) {
      try {
        const status = readFileSync(`/proc/${s.process.pid}/status`, 'utf8');
        const m = /VmHWM:\s+(\d+)\s+kB/.exec(status);
        if (m) out[name] = Number(m[1]);
      } catch {
        // exited
      }
    }
    return out;
  }

  private subscribeFeed(): void {
    // The decision feed (v2): one message per committed decision, its events in order. And the per-event
    // feed (v1) of a build before it, so `--compare` can measure across the change.
    const follow = (subject: string, read: (body: unknown, subject: string) => ThreadEvent[]) => {
      const sub = this.nc.subscribe(subject);
      void (async () => {
        for await (const msg of sub) {
          let events: ThreadEvent[];
          try {
            events = read(JSON.parse(new TextDecoder().decode(msg.data)), msg.subject);
          } catch {
            continue;
          }
          for (const e of events) {
            if (!e.runId || !TERMINAL_TYPES.has(e.type)) continue;
            this.terminals.set(e.runId, e);
            this.terminalWaiters.get(e.runId)?.(e);
          }
        }
      })();
      return sub;
    };
    this.feeds = [
      follow(`${this.prefix.subject}.feed.>`, feedEvents),
      follow(`${this.prefix.subject}.events.>`, (body) => [body as ThreadEvent]),
    ];
  }

  /** Resolves with the run's terminal event as soon as it appears on the event feed. */
  waitTerminal(runId: string, timeoutMs = 60_000): Promise<ThreadEvent> {
    const seen = this.terminals.get(runId);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.terminalWaiters.delete(runId);
        reject(new Error(`run ${runId} did not end within ${timeoutMs} ms`));
      }, timeoutMs);
      this.terminalWaiters.set(runId, (e) => {
        clearTimeout(timer);
        this.terminalWaiters.delete(runId);
        resolve(e);
      });
    });
  }

  async publishRequest(tenant: string, request: RunRequestInput): Promise<void> {
    await this.nc.jetstream().publish(`${this.prefix.subject}.requests.${tenant}`, JSON.stringify(request), {
      msgID: `${tenant}:${request.requestId}`,
    });
  }

  /** Committed transactions of this bench's database so far (pg_stat_database, after the stats flush). */
  async xactCommits(): Promise<number> {
    const rows = await this.orchestratorDb.sql.query<{ n: string }>(
      `select xact_commit::text as n from pg_stat_database where datname = current_database()`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Messages stored per stream since it was created (last sequence), summed: JetStream publishes that were not duplicates. */
  async streamPublishes(): Promise<Record<string, number>> {
    const jsm = await this.nc.jetstreamManager();
    const topo = declareTopology({ subjectPrefix: this.prefix.subject, streamPrefix: this.prefix.stream });
    const out: Record<string, number> = {};
    for (const s of topo.streams) {
      const info = await jsm.streams.info(s.config.name).catch(() => undefined);
      out[s.role] = info?.state.last_seq ?? 0;
    }
    return out;
  }

  async stop(): Promise<void> {
    // A graceful stop (drain, then exit), so node flags such as --cpu-prof get to write their output;
    // a service that has not exited after 10 s is killed.
    await Promise.all(
      [...this.services.values()].map(async (s) => {
        const killer = setTimeout(() => void s.process.kill('SIGKILL'), 10_000);
        await s.process.kill('SIGTERM');
        clearTimeout(killer);
      }),
    );
    for (const sub of this.feeds) sub.unsubscribe();
    try {
      const jsm = await this.nc.jetstreamManager();
      await deleteTopology(
        jsm,
        declareTopology({ subjectPrefix: this.prefix.subject, streamPrefix: this.prefix.stream }),
      );
    } catch {
      // a private server is thrown away anyway
    }
    await this.nc.close().catch(() => undefined);
    await this.orchestratorDb.close();
    if (process.env['BENCH_KEEP_DB']) console.error(`kept database ${this.testDb.url}`);
    else await this.testDb.drop();
  }
}

/** A new empty database on the server of `serverUrl` (no template: the services migrate their schemas at start). */
async function createEmptyDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = newTestDatabaseName();
  const admin = await openAdmin(serverUrl);
  try {
    await admin.sql.run(`create database ${quoteIdent(name)}`);
  } finally {
    await admin.close();
  }
  return {
    name,
    url: databaseUrl(serverUrl, name),
    async drop() {
      const dropper = await openAdmin(serverUrl);
      try {
        await dropper.sql.run(`drop database if exists ${quoteIdent(name)} with (force)`);
      } finally {
        await dropper.close();
      }
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A seeded PRNG (LCG), so a chaos schedule can be replayed with the same seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/** /proc counts CPU time in ticks of 1/USER_HZ s; USER_HZ is 100 on Linux. */
const MS_PER_TICK = 1000 / 100;

/** A process's CPU time so far (user + system), ms; undefined once it has exited. */
function processCpuMs(pid: number | string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * MS_PER_TICK;
  } catch {
    return undefined;
  }
}

function processComm(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}
