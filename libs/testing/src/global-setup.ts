import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartedTestContainer } from 'testcontainers';
import { resolveWorkspaceSources } from './source-resolution';
import type * as TemplateDatabase from './template-database';

/**
 * jest globalSetup of the int and e2e projects. Finds Postgres and NATS (JetStream) — from
 * DATABASE_URL / NATS_URL, else the local defaults, else testcontainers — exports their URLs to the
 * workers, sweeps stale test databases and builds the migrated template that createTestDatabase copies.
 */
export const LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const LOCAL_NATS_URL = 'nats://127.0.0.1:4222';
const POSTGRES_IMAGE = 'postgres:16-alpine';
const NATS_IMAGE = 'nats:2.10';

/** Read by global-teardown.ts: globalSetup and globalTeardown run in the same process. */
export const CONTAINERS_KEY = '__ratchetTestContainers';

export default async function globalSetup(): Promise<void> {
  // One array for both projects' runs of this setup (int and e2e in one jest invocation).
  const registry = globalThis as Record<string, unknown>;
  const started = (registry[CONTAINERS_KEY] ??= []) as StartedTestContainer[];

  let databaseUrl = process.env['DATABASE_URL'];
  let natsUrl = process.env['NATS_URL'];
  if (!databaseUrl && (await tcpAnswers(LOCAL_DATABASE_URL))) databaseUrl = LOCAL_DATABASE_URL;
  if (!natsUrl && (await natsWithJetStreamAnswers(LOCAL_NATS_URL))) natsUrl = LOCAL_NATS_URL;

  if (!databaseUrl || !natsUrl) {
    if (!(await dockerAnswers())) {
      throw new Error(
        `integration tests need Postgres and NATS with JetStream, and ${[
          databaseUrl ? undefined : `no Postgres answers at ${LOCAL_DATABASE_URL}`,
          natsUrl ? undefined : `no NATS with JetStream answers at ${LOCAL_NATS_URL}`,
        ]
          .filter(Boolean)
          .join(' and ')}. Either set DATABASE_URL and NATS_URL to a running Postgres and NATS ` +
          '(e.g. `docker compose up -d nats postgres`, then DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres ' +
          'NATS_URL=nats://127.0.0.1:4222), or start a Docker engine so testcontainers can start them.',
      );
    }
    if (!databaseUrl) {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const pg = await new PostgreSqlContainer(POSTGRES_IMAGE).start();
      started.push(pg);
      databaseUrl = pg.getConnectionUri();
    }
    if (!natsUrl) {
      const { GenericContainer, Wait } = await import('testcontainers');
      const nats = await new GenericContainer(NATS_IMAGE)
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start();
      started.push(nats);
      natsUrl = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
    }
  }
  // Workers are forked after globalSetup and inherit this environment.
  process.env['DATABASE_URL'] = databaseUrl;
  process.env['NATS_URL'] = natsUrl;
  // The services under test seal threads' content at rest, as a deployment with a key file does; the
  // tests that open the log themselves open it with the same file (`testDatabaseKey`).
  process.env['RATCHET_KEY_FILE'] ??= writeTestKeyFile();

  const restore = resolveWorkspaceSources();
  try {
    // Required only now, with the mapping in place (a static import would load before it).
    const { ensureBaseDatabase, ensureTemplate, sweepStaleDatabases } =
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('./template-database') as typeof TemplateDatabase;
    await ensureBaseDatabase(databaseUrl);
    await sweepStaleDatabases(databaseUrl);
    process.env['RATCHET_TEST_TEMPLATE_DB'] = await ensureTemplate(databaseUrl);
  } finally {
    restore();
  }
}

function tcpAnswers(url: string, timeoutMs = 500): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function natsWithJetStreamAnswers(url: string): Promise<boolean> {
  if (!(await tcpAnswers(url))) return false;
  const { connect } = await import('nats');
  try {
    const nc = await connect({ servers: url, timeout: 1_500, reconnect: false });
    try {
      await (await nc.jetstreamManager({ timeout: 1_500 })).getAccountInfo();
      return true;
    } finally {
      await nc.close();
    }
  } catch {
    return false;
  }
}

async function dockerAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** A master key file for the run (the key file format of `ratchet master-key init`). */
function writeTestKeyFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'ratchet-test-keys-')), 'master.json');
  writeFileSync(path, JSON.stringify({ keys: [{ id: 'test', key: randomBytes(32).toString('base64') }] }), {
    mode: 0o600,
  });
  return path;
}
