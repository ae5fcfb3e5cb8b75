import type { NatsConnection } from 'nats';
import { ToolsReply, type CatalogToolView, type Subjects, type ToolSpec, type ToolsRequest } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import type { ToolLogger, ToolRegistry } from '@ratchet/tools';
import type { ToolDirectory } from './tool-directory';

/** What the model worker needs of tools: the schemas the model sees for a tenant's agent. */
export interface ToolSpecs {
  specs(tenantId: string, names: readonly string[]): Promise<ToolSpec[]>;
}

/**
 * The orchestrator's view of tools: its own (built-in and tool modules, which it needs for `local`
 * tools) and, for every other name, the tool executor's catalog of the tenant (`<prefix>.tools.<tenant>
 * .list`), which finds remote tool services and MCP servers. Answers are kept for `cacheMs`, so a
 * model call costs no extra round trip while the catalog is steady; a service that came or went is
 * seen within that time.
 */
export class CatalogTools implements ToolDirectory, ToolSpecs {
  private readonly cache = new Map<string, { at: number; tools: CatalogToolView[] }>();

  constructor(
    private readonly local: ToolRegistry,
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
    private readonly logger: ToolLogger,
    private readonly options: { timeoutMs?: number; cacheMs?: number; now?: () => number } = {},
  ) {}

  async unknown(tenant: string | undefined, names: readonly string[]) {
    const others = names.filter((n) => !this.local.get(n));
    const found = others.length > 0 ? await this.ask(tenant, others, false) : [];
    const offered = new Set(found.map((t) => t.name));
    return {
      missing: others.filter((n) => !offered.has(n)),
      known: [...new Set([...this.local.names(), ...found.map((t) => t.name)])].sort(),
    };
  }

  async specs(tenantId: string, names: readonly string[]): Promise<ToolSpec[]> {
    const others = names.filter((n) => !this.local.get(n));
    const found = others.length > 0 ? await this.ask(tenantId, others, true) : [];
    const byName = new Map(found.map((t) => [t.name, t]));
    const specs: ToolSpec[] = [];
    for (const name of names) {
      if (this.local.get(name)) {
        specs.push(...this.local.specs([name]));
        continue;
      }
      const tool = byName.get(name);
      if (tool) specs.push({ name: tool.name, description: tool.description, parameters: tool.parameters });
      // Its source is away right now (a service restarting): the model is not offered what it cannot call.
      else
        this.logger.warn('a tool of the agent is not offered right now; the model does not see it', {
          tenantId,
          tool: name,
        });
    }
    return specs;
  }

  private async ask(tenant: string | undefined, names: readonly string[], cached: boolean): Promise<CatalogToolView[]> {
    const key = `${tenant ?? '*'}|${[...names].sort().join(',')}`;
    const now = (this.options.now ?? Date.now)();
    const hit = this.cache.get(key);
    if (cached && hit && now - hit.at < (this.options.cacheMs ?? 2_000)) return hit.tools;
    const subject = tenant ? this.subjects.tools(tenant, 'list') : this.subjects.deploymentTools('list');
    const request: ToolsRequest = { op: 'list', names: [...names] };
    let reply: ToolsReply;
    try {
      const msg = await this.nc.request(subject, JSON.stringify(request), { timeout: this.options.timeoutMs ?? 5_000 });
      reply = ToolsReply.parse(msg.json());
    } catch (error) {
      // Asked again by redelivery; a recent answer still serves meanwhile.
      if (hit) return hit.tools;
      throw new TransientError(`the tool catalog did not answer on ${subject}`, 'tools.catalog_unavailable', {
        cause: error,
      });
    }
    if (!reply.ok) throw new TransientError(`tool catalog: ${reply.error.message}`, 'tools.catalog_unavailable');
    this.cache.set(key, { at: now, tools: reply.tools });
    return reply.tools;
  }
}
