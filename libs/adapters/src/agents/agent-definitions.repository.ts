import { AgentDefinition } from '@ratchet/contracts';
import type { SqlExecutor } from '../postgres/sql';
import { agentDigest } from './agent-files.loader';

export interface StoredAgent {
  name: string;
  version: number;
  digest: string;
  definition: AgentDefinition;
}

/**
 * Agent definitions, versioned in `orchestrator.agent_definitions`. Registering content that equals the
 * latest version is a no-op; anything else becomes version n+1. Runs pin the version they started with.
 */
export class AgentDefinitionsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  async register(definition: AgentDefinition): Promise<StoredAgent> {
    const digest = agentDigest(definition);
    const table = this.sql.table('agent_definitions');
    // Serialised per name so two processes registering at start cannot both take version n+1.
    for (let attempt = 0; attempt < 5; attempt++) {
      const latest = await this.latest(definition.name);
      if (latest?.digest === digest) return latest;
      const version = (latest?.version ?? 0) + 1;
      const inserted = await this.sql.run(
        `insert into ${table} (name, version, definition, digest, created_at) values (?, ?, ?::jsonb, ?, now()) on conflict do nothing`,
        [definition.name, version, JSON.stringify(definition), digest],
      );
      if (inserted === 1) return { name: definition.name, version, digest, definition };
    }
    throw new Error(`could not register agent ${definition.name}: too many concurrent registrations`);
  }

  async latest(name: string): Promise<StoredAgent | undefined> {
    const rows = await this.sql.query<Row>(
      `select name, version, digest, definition from ${this.sql.table('agent_definitions')} where name = ? order by version desc limit 1`,
      [name],
    );
    return rows[0] && toStored(rows[0]);
  }

  async get(name: string, version: number): Promise<StoredAgent | undefined> {
    const rows = await this.sql.query<Row>(
      `select name, version, digest, definition from ${this.sql.table('agent_definitions')} where name = ? and version = ?`,
      [name, version],
    );
    return rows[0] && toStored(rows[0]);
  }

  async list(): Promise<StoredAgent[]> {
    const rows = await this.sql.query<Row>(
      `select distinct on (name) name, version, digest, definition from ${this.sql.table('agent_definitions')} order by name, version desc`,
    );
    return rows.map(toStored);
  }
}

interface Row {
  name: string;
  version: number;
  digest: string;
  definition: unknown;
}

function toStored(row: Row): StoredAgent {
  const raw = typeof row.definition === 'string' ? JSON.parse(row.definition) : row.definition;
  return { name: row.name, version: row.version, digest: row.digest, definition: AgentDefinition.parse(raw) };
}
