import { AgentDefinition } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import type { SqlExecutor } from '../postgres/sql';
import { agentDigest } from './agent-files.loader';

/** The owner of deployment-level (shared) agents: not a valid tenant id, so no tenant can be it. */
export const SHARED_AGENT_OWNER = '*';

/** `tenant`: the run's own tenant owns it; `shared`: the deployment offers it to every tenant. */
export type AgentScope = 'tenant' | 'shared';

export interface StoredAgent {
  name: string;
  version: number;
  digest: string;
  scope: AgentScope;
  definition: AgentDefinition;
}

/**
 * A tenant may not start an agent under a name the deployment already offers to every tenant: its
 * runs would resolve that name to its own agent while every other tenant's resolve it to the shared one.
 */
export class AgentNameTakenError extends Error {
  readonly code = 'agent.name_shared';
  constructor(readonly agent: string) {
    super(`"${agent}" is a deployment agent offered to every tenant; register yours under another name`);
    this.name = 'AgentNameTakenError';
  }
}

/**
 * Agent definitions per owner (a tenant, or `*` for the deployment's shared agents), versioned in
 * `orchestrator.agent_definitions` (primary key owner, name, version). Registering content that equals
 * the owner's latest version is a no-op; anything else becomes version n+1.
 *
 * Resolution for a tenant: a name the tenant owns is the tenant's agent; any other name is the shared
 * agent of that name, or unknown. Another tenant's agents never resolve. The rule is stable for pinned
 * versions: a tenant cannot start owning a name while a shared agent has it, so a run that pinned a
 * shared version never later resolves to a tenant's (runs keep `(name, version)`, not the owner).
 */
export class AgentDefinitionsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** `owner`: a tenant id, or `SHARED_AGENT_OWNER` (a deployment operator's change). */
  async register(owner: string, definition: AgentDefinition): Promise<StoredAgent> {
    const digest = agentDigest(definition);
    const table = this.sql.table('agent_definitions');
    const scope: AgentScope = owner === SHARED_AGENT_OWNER ? 'shared' : 'tenant';
    // Serialised per (owner, name) by the primary key: two processes registering at once cannot both take n+1.
    for (let attempt = 0; attempt < 5; attempt++) {
      const latest = await this.latestOf(owner, definition.name);
      if (latest?.digest === digest) return latest;
      const version = (latest?.version ?? 0) + 1;
      // A tenant's first version of a name is refused while a shared agent has that name (in the statement).
      const guard =
        scope === 'tenant' && !latest
          ? ` where not exists (select 1 from ${table} where owner = '${SHARED_AGENT_OWNER}' and name = ?)`
          : '';
      const inserted = await this.sql.run(
        `insert into ${table} (owner, name, version, definition, digest, created_at)
         select ?, ?, ?, ?::jsonb, ?, now()${guard} on conflict do nothing`,
        [owner, definition.name, version, JSON.stringify(definition), digest, ...(guard ? [definition.name] : [])],
      );
      if (inserted === 1) return { name: definition.name, version, digest, scope, definition };
      if (guard && (await this.latestOf(SHARED_AGENT_OWNER, definition.name)))
        throw new AgentNameTakenError(definition.name);
    }
    throw new TransientError(
      `could not register agent ${definition.name}: too many concurrent registrations`,
      'agent.registration_contention',
    );
  }

  /** The latest version of `name` as `tenant` resolves it (its own, else the shared one). */
  async latest(tenant: string, name: string): Promise<StoredAgent | undefined> {
    return this.resolve(tenant, name);
  }

  /** A pinned version of `name` as `tenant` resolves it. */
  async get(tenant: string, name: string, version: number): Promise<StoredAgent | undefined> {
    return this.resolve(tenant, name, version);
  }

  /** What `tenant` can use: its own agents' latest versions and the shared agents it does not shadow. */
  async list(tenant: string): Promise<StoredAgent[]> {
    const rows = await this.sql.query<Row>(
      `select distinct on (name) owner, name, version, digest, definition from ${this.sql.table('agent_definitions')}
        where owner in (?, '${SHARED_AGENT_OWNER}') order by name, (owner = '${SHARED_AGENT_OWNER}'), version desc`,
      [tenant],
    );
    return rows.map(toStored);
  }

  /** The deployment's shared agents (latest versions), or a version of one. */
  async listShared(): Promise<StoredAgent[]> {
    const rows = await this.sql.query<Row>(
      `select distinct on (name) owner, name, version, digest, definition from ${this.sql.table('agent_definitions')}
        where owner = '${SHARED_AGENT_OWNER}' order by name, version desc`,
    );
    return rows.map(toStored);
  }

  async getShared(name: string, version?: number): Promise<StoredAgent | undefined> {
    if (version === undefined) return this.latestOf(SHARED_AGENT_OWNER, name);
    const rows = await this.sql.query<Row>(
      `select owner, name, version, digest, definition from ${this.sql.table('agent_definitions')}
        where owner = '${SHARED_AGENT_OWNER}' and name = ? and version = ?`,
      [name, version],
    );
    return rows[0] && toStored(rows[0]);
  }

  /**
   * Hands every version of a shared agent to one tenant: after the migration made every old definition
   * a shared one, an operator gives a tenant's agent back to it. Refused while another tenant has a run
   * in flight that pinned it (its next step would not find the agent), or when the tenant already owns
   * the name. Versions keep their numbers, so the tenant's pinned runs keep resolving.
   */
  async assignShared(
    name: string,
    tenant: string,
  ): Promise<{ moved: number } | { refused: 'not_shared' | 'tenant_owns_name' | 'in_use'; tenants?: string[] }> {
    const t = this.sql.table('agent_definitions');
    if (!(await this.latestOf(SHARED_AGENT_OWNER, name))) return { refused: 'not_shared' };
    if (await this.latestOf(tenant, name)) return { refused: 'tenant_owns_name' };
    const users = await this.sql.query<{ tenant_id: string }>(
      `select distinct tenant_id from ${this.sql.table('runs')} where agent = ? and tenant_id <> ? and ended_at is null`,
      [name, tenant],
    );
    if (users.length > 0) return { refused: 'in_use', tenants: users.map((u) => u.tenant_id).sort() };
    const moved = await this.sql.run(`update ${t} set owner = ? where owner = '${SHARED_AGENT_OWNER}' and name = ?`, [
      tenant,
      name,
    ]);
    return { moved };
  }

  private async latestOf(owner: string, name: string): Promise<StoredAgent | undefined> {
    const rows = await this.sql.query<Row>(
      `select owner, name, version, digest, definition from ${this.sql.table('agent_definitions')}
        where owner = ? and name = ? order by version desc limit 1`,
      [owner, name],
    );
    return rows[0] && toStored(rows[0]);
  }

  private async resolve(tenant: string, name: string, version?: number): Promise<StoredAgent | undefined> {
    const t = this.sql.table('agent_definitions');
    const rows = await this.sql.query<Row>(
      `select owner, name, version, digest, definition from ${t}
        where name = ? ${version === undefined ? '' : 'and version = ?'}
          and owner = case when exists (select 1 from ${t} where owner = ? and name = ?) then ? else '${SHARED_AGENT_OWNER}' end
        order by version desc limit 1`,
      [name, ...(version === undefined ? [] : [version]), tenant, name, tenant],
    );
    return rows[0] && toStored(rows[0]);
  }
}

interface Row {
  owner: string;
  name: string;
  version: number;
  digest: string;
  definition: unknown;
}

function toStored(row: Row): StoredAgent {
  const raw = typeof row.definition === 'string' ? JSON.parse(row.definition) : row.definition;
  return {
    name: row.name,
    version: row.version,
    digest: row.digest,
    scope: row.owner === SHARED_AGENT_OWNER ? 'shared' : 'tenant',
    definition: AgentDefinition.parse(raw),
  };
}
