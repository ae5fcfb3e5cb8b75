import type { AgentDefinitionInput } from '@ratchet/contracts';
import { AgentDefinition } from '@ratchet/contracts';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import { openDatabase, type Database } from '../postgres/orm';
import { openServiceDatabase } from '../postgres/service-database';
import { ORCHESTRATOR_MIGRATIONS } from '../postgres/migrations';
import { Migration20270301000000_orchestrator_agent_owners as AgentOwners } from '../postgres/migrations/orchestrator/Migration20270301000000_agent_owners';
import { AgentDefinitionsRepository, AgentNameTakenError, SHARED_AGENT_OWNER } from './agent-definitions.repository';

const agent = (name: string, reply: string): AgentDefinition =>
  AgentDefinition.parse({ name, model: { provider: 'scripted', script: [{ reply }] } } satisfies AgentDefinitionInput);
const reply = (a: { definition: AgentDefinition } | undefined) =>
  a?.definition.model.provider === 'scripted' ? a.definition.model.script[0]?.reply : undefined;

let testDb: TestDatabase;
let db: Database;
let repo: AgentDefinitionsRepository;
beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'orchestrator');
  repo = new AgentDefinitionsRepository(db.sql);
});
afterAll(async () => {
  await db?.close();
  await testDb.drop();
});

describe('agent definitions belong to a tenant or to the deployment', () => {
  it("resolves a tenant's own agents and the shared ones, never another tenant's", async () => {
    await repo.register('acme', agent('support', 'acme v1'));
    await repo.register('acme', agent('support', 'acme v2'));
    await repo.register(SHARED_AGENT_OWNER, agent('greeter', 'shared v1'));

    expect(await repo.latest('acme', 'support')).toMatchObject({ version: 2, scope: 'tenant' });
    expect(reply(await repo.get('acme', 'support', 1))).toBe('acme v1');
    // Another tenant: the name is unknown, by latest, by version and in its list.
    expect(await repo.latest('globex', 'support')).toBeUndefined();
    expect(await repo.get('globex', 'support', 1)).toBeUndefined();
    expect((await repo.list('globex')).map((a) => a.name)).toEqual(['greeter']);
    // Shared agents resolve for every tenant.
    expect(await repo.latest('globex', 'greeter')).toMatchObject({ version: 1, scope: 'shared' });
    expect((await repo.list('acme')).map((a) => `${a.name}@${a.version}:${a.scope}`)).toEqual([
      'greeter@1:shared',
      'support@2:tenant',
    ]);
    expect((await repo.listShared()).map((a) => a.name)).toEqual(['greeter']);
  });

  it('numbers versions per owner and registers unchanged content once', async () => {
    const a = await repo.register('initech', agent('support', 'initech v1'));
    expect(a).toMatchObject({ version: 1, scope: 'tenant' });
    expect(await repo.register('initech', agent('support', 'initech v1'))).toMatchObject({ version: 1 });
    // acme's two versions of the same name are not initech's.
    expect(reply(await repo.get('initech', 'support', 2))).toBeUndefined();
  });

  it("refuses a tenant's first version of a shared name; a tenant that owned it first keeps its own", async () => {
    await expect(repo.register('globex', agent('greeter', 'mine'))).rejects.toBeInstanceOf(AgentNameTakenError);
    expect(await repo.list('globex')).toEqual([expect.objectContaining({ name: 'greeter', scope: 'shared' })]);
    // The operator adds a shared "support": acme (which owns "support") still runs its own.
    await repo.register(SHARED_AGENT_OWNER, agent('support', 'shared support'));
    expect(reply(await repo.latest('acme', 'support'))).toBe('acme v2');
    expect(reply(await repo.get('acme', 'support', 1))).toBe('acme v1');
    expect(reply(await repo.latest('globex', 'support'))).toBe('shared support');
    expect(await repo.register('acme', agent('support', 'acme v3'))).toMatchObject({ version: 3, scope: 'tenant' });
  });
});

describe('handing a shared agent to a tenant (after the migration)', () => {
  it('moves every version to the tenant, which keeps resolving them; other tenants no longer see it', async () => {
    await repo.register(SHARED_AGENT_OWNER, agent('legacy', 'v1'));
    await repo.register(SHARED_AGENT_OWNER, agent('legacy', 'v2'));
    expect(await repo.assignShared('legacy', 'acme')).toEqual({ moved: 2 });
    expect(reply(await repo.get('acme', 'legacy', 1))).toBe('v1');
    expect(await repo.latest('acme', 'legacy')).toMatchObject({ version: 2, scope: 'tenant' });
    expect(await repo.latest('globex', 'legacy')).toBeUndefined();
    expect(await repo.assignShared('legacy', 'globex')).toEqual({ refused: 'not_shared' });
  });

  it("is refused while another tenant's run in flight pinned it, or when the tenant owns the name", async () => {
    await repo.register(SHARED_AGENT_OWNER, agent('busy', 'v1'));
    await db.sql.run(
      `insert into ${db.sql.table('runs')} (tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, started_at, version)
       values ('globex', 'run-busy', 'th-busy', 'req-busy', 'busy', 1, 'u', 'running', now(), 1)`,
    );
    expect(await repo.assignShared('busy', 'acme')).toEqual({ refused: 'in_use', tenants: ['globex'] });
    // acme owns "support" and the deployment has a shared "support" too (from the tests above).
    expect(await repo.assignShared('support', 'acme')).toEqual({ refused: 'tenant_owns_name' });
  });
});

describe('migration: one catalog for every tenant → owners', () => {
  const SCHEMA = 'orchestrator_agents_legacy';
  it('keeps every existing version, as a shared agent each pinned run still resolves', async () => {
    const before = ORCHESTRATOR_MIGRATIONS.slice(0, ORCHESTRATOR_MIGRATIONS.indexOf(AgentOwners));
    const old = await openDatabase({ url: testDb.url, schema: SCHEMA, migrations: before, poolMax: 2 });
    await old.migrate();
    const t = old.sql.table('agent_definitions');
    // As the previous release wrote them (no owner column): two versions of one agent, one of another.
    for (const [name, version, text] of [
      ['support', 1, 'old v1'],
      ['support', 2, 'old v2'],
      ['demo', 1, 'demo'],
    ] as const) {
      await old.sql.run(`insert into ${t} (name, version, definition, digest) values (?, ?, ?::jsonb, ?)`, [
        name,
        version,
        JSON.stringify(agent(name, text)),
        `digest-${name}-${version}`,
      ]);
    }
    await old.close();

    const after = await openDatabase({
      url: testDb.url,
      schema: SCHEMA,
      migrations: ORCHESTRATOR_MIGRATIONS,
      poolMax: 2,
    });
    expect(await after.migrate()).toContain(AgentOwners.name);
    const migrated = new AgentDefinitionsRepository(after.sql);
    for (const tenant of ['acme', 'globex']) {
      expect(reply(await migrated.get(tenant, 'support', 1))).toBe('old v1');
      expect(reply(await migrated.get(tenant, 'support', 2))).toBe('old v2');
      expect(await migrated.latest(tenant, 'demo')).toMatchObject({
        version: 1,
        scope: 'shared',
        digest: 'digest-demo-1',
      });
    }
    expect((await migrated.listShared()).map((a) => `${a.name}@${a.version}`)).toEqual(['demo@1', 'support@2']);
    // Now only an operator changes them: the next shared version continues the numbering.
    expect(await migrated.register(SHARED_AGENT_OWNER, agent('support', 'new'))).toMatchObject({ version: 3 });
    await after.close();
  });
});
