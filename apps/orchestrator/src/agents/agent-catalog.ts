import type { AgentDefinition } from '@ratchet/contracts';
import { AgentDefinitionsRepository, loadAgentDirectory, type StoredAgent } from '@ratchet/adapters';
import type { ToolRegistry } from '@ratchet/tools';

/**
 * Agent definitions by name and version. Versions never change once stored, so they are cached
 * forever; "latest" is read from Postgres each time so a new version registered by any process is
 * picked up by the next run (runs in flight keep the version they pinned).
 */
export class AgentCatalog {
  private readonly versions = new Map<string, StoredAgent>();

  constructor(
    private readonly repository: AgentDefinitionsRepository,
    private readonly tools: ToolRegistry,
  ) {}

  /** Registers every agent file of a directory; unchanged files do not create versions. */
  async registerDirectory(dir: string): Promise<StoredAgent[]> {
    const agents = await loadAgentDirectory(dir);
    const stored: StoredAgent[] = [];
    for (const agent of agents) stored.push(await this.register(agent, dir));
    return stored;
  }

  async register(agent: AgentDefinition, source = 'api'): Promise<StoredAgent> {
    for (const t of agent.tools) {
      if (!this.tools.get(t.name)) {
        throw new Error(
          `${source}: agent ${agent.name}: tools: unknown tool "${t.name}" (known: ${this.tools.names().join(', ')})`,
        );
      }
    }
    const stored = await this.repository.register(agent);
    this.versions.set(key(stored.name, stored.version), stored);
    return stored;
  }

  list(): Promise<StoredAgent[]> {
    return this.repository.list();
  }

  latest(name: string): Promise<StoredAgent | undefined> {
    return this.repository.latest(name);
  }

  async get(name: string, version: number): Promise<StoredAgent | undefined> {
    const cached = this.versions.get(key(name, version));
    if (cached) return cached;
    const stored = await this.repository.get(name, version);
    if (stored) this.versions.set(key(name, version), stored);
    return stored;
  }
}

const key = (name: string, version: number) => `${name}@${version}`;
