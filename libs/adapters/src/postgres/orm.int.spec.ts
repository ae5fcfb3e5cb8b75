import { createTestDatabase, databaseUrl, type TestDatabase } from '@ratchet/testing';
import { SERVICE_SCHEMAS } from './migrations';
import { DatabaseUnavailableError, openDatabase, redactUrl } from './orm';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await testDb.drop();
});

describe('openDatabase', () => {
  it('migrates a new schema once, keeping the migrations table inside it', async () => {
    const db = await openDatabase({
      url: testDb.url,
      schema: 'scratch_orch',
      migrations: SERVICE_SCHEMAS.orchestrator.migrations,
    });
    try {
      const all = SERVICE_SCHEMAS.orchestrator.migrations.map((m) => m.name);
      expect(await db.pendingMigrations()).toEqual(all);
      expect(await db.migrate()).toEqual(all);
      expect(await db.migrate()).toEqual([]);
      expect(await db.pendingMigrations()).toEqual([]);
      const tables = await db.sql.query<{ table_name: string }>(
        'select table_name from information_schema.tables where table_schema = ? order by table_name',
        ['scratch_orch'],
      );
      expect(tables.map((t) => t.table_name)).toEqual([
        'agent_definitions',
        'erasures',
        'failed_messages',
        'housekeeping',
        'housekeeping_ticks',
        'inbox',
        'mikro_orm_migrations',
        'model_limit_admissions',
        'model_usage',
        'outbox',
        'runs',
        'schedule_ticks',
        'schedules',
        'slot_turns',
        'tenant_agent_settings',
        'tenant_caps',
        'tenant_slot_limits',
        'tenant_usage_counters',
        'thread_events',
        'thread_keys',
        'thread_messages',
        'thread_snapshots',
        'threads',
        'webhook_deliveries',
        'webhook_secrets',
      ]);
    } finally {
      await db.close();
    }
  });

  it('lets concurrent processes migrate the same schema', async () => {
    const dbs = await Promise.all(
      [1, 2, 3].map(() =>
        openDatabase({ url: testDb.url, schema: 'scratch_tools', migrations: SERVICE_SCHEMAS.tools.migrations }),
      ),
    );
    try {
      const applied = await Promise.all(dbs.map((db) => db.migrate()));
      // Every migration is applied exactly once, by whichever process got there first.
      expect(applied.flat().sort()).toEqual(SERVICE_SCHEMAS.tools.migrations.map((m) => m.name).sort());
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
    }
  });

  it('template databases come with every service schema migrated', async () => {
    for (const { schema, migrations } of Object.values(SERVICE_SCHEMAS)) {
      const db = await openDatabase({ url: testDb.url, schema, migrations });
      try {
        expect(await db.pendingMigrations()).toEqual([]);
      } finally {
        await db.close();
      }
    }
  });

  it('names the URL (without its password) and the fix when Postgres is unreachable', async () => {
    const url = 'postgres://ratchet:s3cret@127.0.0.1:1/ratchet';
    const error = await openDatabase({ url, schema: 'x', migrations: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain('postgres://ratchet:***@127.0.0.1:1/ratchet');
    expect(message).not.toContain('s3cret');
    expect(message).toContain('docker compose up -d nats postgres');
  });

  it('reports a missing database as unavailable too', async () => {
    const url = databaseUrl(testDb.url, 'ratchet_does_not_exist');
    await expect(openDatabase({ url, schema: 'x', migrations: [] })).rejects.toThrow(/ratchet_does_not_exist/);
  });
});

describe('redactUrl', () => {
  it('hides only the password', () => {
    expect(redactUrl('postgres://u:p@h:5432/db?sslmode=require')).toBe('postgres://u:***@h:5432/db?sslmode=require');
    expect(redactUrl('postgres://u@h/db')).toBe('postgres://u@h/db');
  });
});
