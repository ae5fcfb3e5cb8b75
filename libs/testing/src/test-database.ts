import { quoteIdent } from '@ratchet/adapters';
import { databaseUrl, ensureTemplate, newTestDatabaseName, openAdmin, randomToken } from './template-database';

export interface TestDatabase {
  /** The new database's URL: open each service's schema on it with `openServiceDatabase`. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A fresh database for one test file, copied from the migrated template (every service schema is
 * already there), so files never see each other's rows. Needs DATABASE_URL (the int/e2e globalSetup
 * sets it); builds the template itself when the globalSetup did not.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env['DATABASE_URL'];
  if (!adminUrl) {
    throw new Error(
      'createTestDatabase needs DATABASE_URL: run through the jest int/e2e projects (their globalSetup sets it) ' +
        'or export DATABASE_URL pointing at a running Postgres (e.g. `docker compose up -d nats postgres`).',
    );
  }
  const template = process.env['RATCHET_TEST_TEMPLATE_DB'] ?? (await ensureTemplate(adminUrl));
  const name = newTestDatabaseName();
  const admin = await openAdmin(adminUrl);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.sql.run(`create database ${quoteIdent(name)} template ${quoteIdent(template)}`);
        break;
      } catch (error) {
        // 55006: someone is connected to the template (a psql session, a template being renamed): wait.
        if ((error as { code?: unknown }).code !== '55006' || attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await admin.close();
  }
  return {
    name,
    url: databaseUrl(adminUrl, name),
    async drop() {
      const dropper = await openAdmin(adminUrl);
      try {
        // FORCE: a pool the test forgot to close must not keep the database alive.
        await dropper.sql.run(`drop database if exists ${quoteIdent(name)} with (force)`);
      } finally {
        await dropper.close();
      }
    },
  };
}

export interface NatsPrefix {
  /** Subject prefix for this test file, e.g. `t1a2b3c4d5e`, used where the default is `ratchet`. */
  subject: string;
  /** The matching stream-name prefix, uppercase, e.g. `T1A2B3C4D5E`. */
  stream: string;
}

/**
 * Per-file NATS isolation: JetStream refuses streams whose subjects overlap, so unique stream names
 * are not enough; each file also needs its own subject prefix. Delete the streams afterwards.
 */
export function uniquePrefix(): NatsPrefix {
  const subject = `t${randomToken(10)}`;
  return { subject, stream: subject.toUpperCase() };
}
