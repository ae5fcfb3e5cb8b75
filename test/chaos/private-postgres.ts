import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// Not the package index: it also exports the jest contract suites, which refuse to load outside jest.
// eslint-disable-next-line import/no-relative-packages -- see above
import { freePort } from '../../libs/testing/src/service-process';

/*
 * A private Postgres cluster in a temp dir, so chaos can crash and restart it without touching the
 * machine's shared server. `initdb` (trust auth, superuser `postgres`, fsync left on) takes well under a
 * second; the server listens on 127.0.0.1 at a free port, its socket in the temp dir.
 *
 * Postgres refuses to run as root: as root, initdb and the server run as the `postgres` user (spawned
 * with its uid/gid, the temp dir chowned to it).
 *
 * `kill()` SIGKILLs the postmaster, like a crash: the backends it leaves behind notice and exit, the
 * next start finds the cluster "not properly shut down" and runs crash recovery from the WAL.
 */

/** The part of `pg` used here (the workspace has no @types/pg). */
interface PgClient {
  connect(): Promise<void>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Client } = require('pg') as {
  Client: new (config: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient;
};

/** Where the Postgres binaries are: RATCHET_PG_BIN, /usr/local/bin, the newest /usr/lib/postgresql/N/bin, else PATH. */
export function postgresBinary(name: 'initdb' | 'postgres' | 'pg_basebackup'): string {
  const dirs = [process.env['RATCHET_PG_BIN'], '/usr/local/bin'];
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    dirs.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  } catch {
    // not a Debian-style install
  }
  for (const dir of dirs) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return name;
}

interface Owner {
  uid: number;
  gid: number;
}

/** The `postgres` user from /etc/passwd, when this process is root; else undefined (run as ourselves). */
function clusterOwner(): Owner | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error('running as root: a private Postgres needs a `postgres` user to run as (initdb refuses root)');
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/** Pids of the live (not zombie) children of `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && stat.ppid === pid && stat.state !== 'Z') out.push(Number(entry));
  }
  return out;
}

function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state ?? '', ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class PrivatePostgres {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly owner: Owner | undefined,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ratchet-chaos-pg-'));
    try {
      const owner = clusterOwner();
      if (owner) chownSync(dir, owner.uid, owner.gid);
      const pg = new PrivatePostgres(await freePort(), dir, owner);
      await pg.initdb();
      await pg.restart();
      return pg;
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * A streaming-replication standby of `primary` in a temp dir of its own: a base backup taken over the
   * replication protocol (`pg_basebackup -R`, which writes `standby.signal` and `primary_conninfo`), then
   * started; it follows the primary's WAL until `promote()`. Name it in the primary's
   * `synchronous_standby_names` (`application_name` is `standby`) to make every commit wait for it.
   */
  static async standbyOf(primary: PrivatePostgres): Promise<PrivatePostgres> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ratchet-chaos-pg-standby-'));
    try {
      const owner = clusterOwner();
      if (owner) chownSync(dir, owner.uid, owner.gid);
      const pg = new PrivatePostgres(await freePort(), dir, owner);
      const child = pg.spawn(postgresBinary('pg_basebackup'), [
        '-h',
        '127.0.0.1',
        '-p',
        String(primary.port),
        '-U',
        'postgres',
        '-D',
        pg.dataDir,
        '-R',
        '-X',
        'stream',
        '-d',
        `host=127.0.0.1 port=${primary.port} user=postgres application_name=standby`,
      ]);
      const code = await new Promise<number | null>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', resolve);
      });
      if (code !== 0) throw new Error(`pg_basebackup exited with ${code}:\n${pg.logTail()}`);
      await pg.restart();
      return pg;
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Runs one statement as superuser on the `postgres` database; its rows. */
  async sql<R = Record<string, unknown>>(text: string): Promise<R[]> {
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return ((await client.query(text)) as { rows: R[] }).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Ends a standby's recovery: from now on it is a primary that accepts writes. */
  async promote(): Promise<void> {
    await this.sql('select pg_promote(true, 60)');
  }

  get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  get logFile(): string {
    return path.join(this.dir, 'postgres.log');
  }

  /** The server's `postgres` database as superuser: an admin URL (create the test database from it). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** The last lines the server logged (for errors; crash recovery shows here as "automatic recovery in progress"). */
  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** Crash recoveries the server has run so far, from its log. */
  recoveries(): number {
    try {
      return readFileSync(this.logFile, 'utf8').split('automatic recovery in progress').length - 1;
    } catch {
      return 0;
    }
  }

  private spawn(command: string, args: string[]): ChildProcess {
    const log = openSync(this.logFile, 'a');
    try {
      return spawn(command, args, {
        cwd: this.dir,
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' },
        stdio: ['ignore', log, log],
        ...(this.owner ?? {}),
      });
    } finally {
      closeSync(log); // the child holds its own copy
    }
  }

  private async initdb(): Promise<void> {
    const child = this.spawn(postgresBinary('initdb'), [
      '-D',
      this.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-instructions',
    ]);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0) throw new Error(`initdb exited with ${code}:\n${this.logTail()}`);
  }

  /** (Re)starts the server and resolves once it accepts connections (after crash recovery, if any). */
  async restart(): Promise<void> {
    await this.kill();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const child = this.spawn(postgresBinary('postgres'), [
        '-D',
        this.dataDir,
        '-p',
        String(this.port),
        '-k',
        this.dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'max_connections=200',
        '-c',
        'fsync=on',
      ]);
      this.child = child;
      let exited = false;
      let spawnError: Error | undefined;
      child.once('exit', () => (exited = true));
      child.once('error', (error) => {
        exited = true;
        spawnError = error;
      });
      while (!exited) {
        if (await this.answers()) return;
        if (Date.now() > deadline) {
          await this.kill();
          throw new Error(`private postgres did not accept connections within 60 s:\n${this.logTail()}`);
        }
        await sleep(100);
      }
      if (spawnError) throw new Error(`cannot run postgres: ${spawnError.message}`);
      // Exited at start: backends of the killed postmaster may still hold its shared memory ("pre-existing
      // shared memory block ... is still in use"); try again until they are gone.
      if (Date.now() > deadline) throw new Error(`private postgres did not start:\n${this.logTail()}`);
      await sleep(200);
    }
  }

  private async answers(): Promise<boolean> {
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false; // refused, or "the database system is starting up" during recovery
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * SIGKILLs the postmaster (default; a crash) and resolves once it and every process it had started
   * are gone: orphaned backends exit when they notice the postmaster died; any still there after
   * `graceMs` are SIGKILLed too. With another signal (SIGINT: fast shutdown) a postmaster still there
   * after `graceMs` is SIGKILLed.
   */
  async kill(signal: NodeJS.Signals = 'SIGKILL', graceMs = 5000): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const children = childrenOf(child.pid);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
    const until = Date.now() + graceMs;
    while (children.some(alive) && Date.now() < until) await sleep(20);
    for (const pid of children.filter(alive)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    while (children.some(alive)) await sleep(20);
  }

  /**
   * Shuts the server down (fast shutdown, so it removes its System V shared memory segment; a crashed
   * postmaster leaves it behind for the next start to reclaim, and there is no next start) and removes
   * the cluster.
   */
  async stop(): Promise<void> {
    await this.kill('SIGINT', 10_000);
    // Killed after all (or never restarted after a crash): remove the segment named in postmaster.pid.
    const shmid = this.sharedMemoryId();
    if (shmid !== undefined) {
      await new Promise((resolve) =>
        spawn('ipcrm', ['-m', shmid], { stdio: 'ignore' }).once('close', resolve).once('error', resolve),
      );
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The shared memory id in postmaster.pid (line 7: key and id), while the file is there. */
  private sharedMemoryId(): string | undefined {
    try {
      const line = readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[6];
      const id = line?.trim().split(/\s+/)[1];
      return id && /^\d+$/.test(id) ? id : undefined;
    } catch {
      return undefined;
    }
  }
}
