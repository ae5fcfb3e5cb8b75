import type { AgentDefinition } from '@ratchet/contracts';
import {
  AgentDefinitionsRepository,
  loadAgentDirectory,
  SHARED_AGENT_OWNER,
  type StoredAgent,
} from '@ratchet/adapters';
import { UnknownToolsError, type ToolDirectory } from './tool-directory';

/**
 * Agent definitions per tenant, by name and version (architecture §8): a tenant's runs resolve its own
 * agents and the deployment's shared ones, never another tenant's. Versions never change once stored,
 * so a (tenant, name, version) is cached forever; "latest" is read from Postgres each time so a new
 * version registered by any process is picked up by the next run (runs in flight keep the version
 * they pinned).
 */
export class AgentCatalog {
  private readonly versions = new Map<string, StoredAgent>();

  constructor(
    private readonly repository: AgentDefinitionsRepository,
    private readonly tools: ToolDirectory,
  ) {}

  /** Registers every agent file of a directory as shared agents; unchanged files do not create versions. */
  async registerDirectory(dir: string): Promise<StoredAgent[]> {
    const agents = await loadAgentDirectory(dir);
    const stored: StoredAgent[] = [];
    for (const agent of agents) stored.push(await this.register(undefined, agent, dir));
    return stored;
  }

  /**
   * `tenant` undefined: a shared agent (a deployment operator's change; its tools must be offered to
   * every tenant). Otherwise the tenant's own, whose tools must be in that tenant's catalog.
   */
  async register(tenant: string | undefined, agent: AgentDefinition, source = 'api'): Promise<StoredAgent> {
    const unknown = await this.tools.unknown(
      tenant,
      agent.tools.map((t) => t.name),
    );
    if (unknown.missing.length > 0) throw new UnknownToolsError(source, agent.name, unknown.missing, unknown.known);
    return this.repository.register(tenant ?? SHARED_AGENT_OWNER, agent);
  }

  list(tenant: string): Promise<StoredAgent[]> {
    return this.repository.list(tenant);
  }

  listShared(): Promise<StoredAgent[]> {
    return this.repository.listShared();
  }

  getShared(name: string, version?: number): Promise<StoredAgent | undefined> {
    return this.repository.getShared(name, version);
  }

  latest(tenant: string, name: string): Promise<StoredAgent | undefined> {
    return this.repository.latest(tenant, name);
  }

  async get(tenant: string, name: string, version: number): Promise<StoredAgent | undefined> {
    const k = `${tenant}/${name}@${version}`;
    const cached = this.versions.get(k);
    if (cached) return cached;
    const stored = await this.repository.get(tenant, name, version);
    if (stored) this.versions.set(k, stored);
    return stored;
  }
}
