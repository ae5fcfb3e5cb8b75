#!/usr/bin/env node
// `npm start`: runs every service from source, each as its own process, against local Postgres and
// NATS. `npm start -- --demo` (or RATCHET_START_DEMO=1) also runs the demo once the gateway is ready.
//
// Local development only: when unset, the gateway is given a bootstrap API key (rk_local_demo_key)
// for the `demo` tenant, so the demo and curl work out of the box. Never use it in a deployment.
// When RATCHET_KEY_FILE is unset, threads' content is sealed with a local master key file made once in
// .ratchet/master.json (the `ratchet` CLI finds it there too).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import pg from 'pg';
import { buildConsole } from './build-console.mjs';
import { spawnTs } from './run-ts.mjs';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ratchet';
const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
const LOCAL_API_KEY = 'rk_local_demo_key';
const READY_TIMEOUT_MS = 60_000;
const COMPOSE_HINT = 'docker compose up -d nats postgres';

/** Started in this order; the gateway last, so it opens its port once the workers are starting. */
const SERVICES = ['orchestrator', 'tool-executor', 'approvals', 'memory', 'gateway'];
/** One host, so each worker needs its own health port (in containers they all use 9090). */
const HEALTH_PORTS = { orchestrator: 9091, 'tool-executor': 9092, approvals: 9093, memory: 9094 };

const env = process.env;
const demo = process.argv.includes('--demo') || env.RATCHET_START_DEMO === '1';
const databaseUrl = env.DATABASE_URL || DEFAULT_DATABASE_URL;
const natsUrl = env.NATS_URL || DEFAULT_NATS_URL;
const gatewayPort = env.GATEWAY_PORT || '8080';
const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
const shutdownGraceMs = Number(env.SHUTDOWN_GRACE_MS) || 10_000;

const colour = process.stdout.isTTY && !env.NO_COLOR;
const paint = (code, text) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
const say = (text) => process.stdout.write(`${paint('1', 'ratchet')} ${text}\n`);
const fail = (text) => {
  process.stderr.write(`${paint('31;1', 'ratchet')} ${text}\n`);
  process.exit(1);
};

// ---- preflight ------------------------------------------------------------------------------

/** The URL as safe to print: without a password. */
function shown(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** Resolves to undefined when host:port accepts a TCP connection, else to the error code. */
function probe(url, defaultPort) {
  let host;
  let port;
  try {
    const u = new URL(url.split(',')[0].trim());
    host = u.hostname;
    port = Number(u.port || defaultPort);
  } catch {
    return Promise.resolve('not a valid URL');
  }
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(3000, () => socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error) => resolve(error.code ?? error.message));
  });
}

async function ensureDatabase(url) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1)) || 'postgres';
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  try {
    await client.connect();
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      say(`creating database ${name}`);
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    }
  } catch (error) {
    // 42P04: created concurrently by someone else, which is fine.
    if (error?.code !== '42P04') fail(`could not check or create database ${name} at ${shown(url)}: ${error.message}`);
  } finally {
    await client.end().catch(() => {});
  }
}

// ---- services -------------------------------------------------------------------------------

const PALETTE = ['36', '35', '33', '32', '34', '96', '95'];
const width = Math.max(...SERVICES.map((s) => s.length), 'demo'.length);
/** name -> ChildProcess, while it runs */
const running = new Map();
let stopping = false;
let exitCode = 0;

function pipeLines(stream, name, code, out) {
  const prefix = `${paint(code, name.padEnd(width))} │ `;
  readline
    .createInterface({ input: stream, crlfDelay: Infinity })
    .on('line', (line) => out.write(`${prefix}${line}\n`));
}

function start(name, entry, args, extraEnv, { critical }) {
  const code = PALETTE[running.size % PALETTE.length];
  const child = spawnTs(entry, args, {
    env: { ...childEnv, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal Ctrl-C reaches only this script, which forwards one signal, so a
    // service is never hit twice mid-drain.
    detached: true,
  });
  running.set(name, child);
  pipeLines(child.stdout, name, code, process.stdout);
  pipeLines(child.stderr, name, code, process.stderr);
  child.on('error', (error) => {
    process.stderr.write(`${name} could not start: ${error.message}\n`);
  });
  child.on('exit', (status, signal) => {
    running.delete(name);
    if (!critical) {
      const how = signal ? `by ${signal}` : `with code ${status}`;
      say(`${name} finished ${how}${stopping ? '' : '; the services keep running (Ctrl-C stops them)'}`);
    } else if (!stopping) {
      const how = signal ? `was killed by ${signal}` : `exited with code ${status}`;
      process.stderr.write(`${paint('31;1', 'ratchet')} ${name} ${how} unexpectedly; stopping the others\n`);
      exitCode = 1;
      stop('SIGTERM');
    }
    if (stopping && running.size === 0) process.exit(exitCode);
  });
  return child;
}

function stop(signal) {
  if (stopping) return;
  stopping = true;
  for (const child of running.values()) child.kill(signal);
  if (running.size === 0) process.exit(exitCode);
  // Whatever has not drained after the grace period is killed.
  setTimeout(() => {
    for (const [name, child] of running) {
      process.stderr.write(`${name} did not stop within ${shutdownGraceMs + 5000} ms; killing it\n`);
      child.kill('SIGKILL');
    }
  }, shutdownGraceMs + 5000).unref();
}

process.on('SIGINT', () => (stopping ? killAll() : stop('SIGINT')));
process.on('SIGTERM', () => stop('SIGTERM'));
// Children live in their own process groups, so make sure none outlives this script.
process.on('exit', killAll);
function killAll() {
  for (const child of running.values()) child.kill('SIGKILL');
}

async function waitForGateway() {
  const url = `${gatewayUrl}/health/ready`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!stopping && Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

/** The local master key file (the format of `ratchet master-key init`), made on first start. */
function localKeyFile() {
  const file = path.resolve('.ratchet', 'master.json');
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const key = { id: 'local', key: randomBytes(32).toString('base64') };
    writeFileSync(file, `${JSON.stringify({ keys: [key] }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    say(`made a local master key for threads' content: ${file}`);
  }
  return file;
}

// ---- main -----------------------------------------------------------------------------------

const [pgError, natsError] = await Promise.all([probe(databaseUrl, 5432), probe(natsUrl, 4222)]);
if (pgError) fail(`Postgres is not reachable at ${shown(databaseUrl)} (${pgError}). Start it, or run: ${COMPOSE_HINT}`);
if (natsError) fail(`NATS is not reachable at ${shown(natsUrl)} (${natsError}). Start it, or run: ${COMPOSE_HINT}`);
await ensureDatabase(databaseUrl);
// The services run from source; the web console they serve is built here (under a second).
await buildConsole({ quiet: true });

const keyFile = env.RATCHET_KEY_FILE || localKeyFile();

const childEnv = {
  ...env,
  RATCHET_KEY_FILE: keyFile,
  DATABASE_URL: databaseUrl,
  NATS_URL: natsUrl,
  GATEWAY_BOOTSTRAP_API_KEY: env.GATEWAY_BOOTSTRAP_API_KEY || LOCAL_API_KEY,
  GATEWAY_BOOTSTRAP_TENANT: env.GATEWAY_BOOTSTRAP_TENANT || 'demo',
  ...(colour && !env.FORCE_COLOR ? { FORCE_COLOR: '1' } : {}),
};

for (const name of SERVICES) {
  const health = HEALTH_PORTS[name] ? { HEALTH_PORT: String(HEALTH_PORTS[name]) } : {};
  start(name, `apps/${name}/src/main.ts`, [], { SERVICE: name, ...health }, { critical: true });
}

if (await waitForGateway()) {
  say(`Ratchet is up: gateway listening on ${gatewayUrl} (console: ${gatewayUrl}/console/) — try: npm run demo`);
  if (demo && !stopping) {
    start(
      'demo',
      'apps/cli/src/main.ts',
      ['demo'],
      { RATCHET_API_KEY: childEnv.GATEWAY_BOOTSTRAP_API_KEY },
      { critical: false },
    );
  }
} else if (!stopping) {
  process.stderr.write(
    `${paint('31;1', 'ratchet')} the gateway was not ready at ${gatewayUrl}/health/ready within ${READY_TIMEOUT_MS / 1000}s; stopping\n`,
  );
  exitCode = 1;
  stop('SIGTERM');
}
