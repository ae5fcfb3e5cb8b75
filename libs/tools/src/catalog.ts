import type { ToolRegistry } from './registry';
import type { AnyTool } from './tool';

/** A tool a dynamic source offers: to every tenant (`tenant` undefined) or to one tenant only. */
export interface OfferedTool {
  tool: AnyTool;
  tenant?: string | undefined;
}

/** A tool (or a whole source) that is withheld, with a named reason: what `ratchet`/the API show. */
export interface ToolProblem {
  source: string;
  tool?: string | undefined;
  tenant?: string | undefined;
  code: string;
  message: string;
}

/** Tools that come and go at run time: remote tool services found on NATS, MCP servers. */
export interface DynamicToolSource {
  readonly id: string;
  offered(): readonly OfferedTool[];
  problems(): readonly ToolProblem[];
  /** Looks again now (a call named a tool nobody offers yet); at most one look at a time. */
  refresh?(): Promise<void>;
}

/** How the tool executor finds the tool of a call: per tenant, since sources can be bound to one. */
export interface ToolLookup {
  resolve(tenantId: string, name: string): Promise<AnyTool | undefined>;
}

export type CatalogScope = 'tenant' | 'shared';

/**
 * Every tool a tenant's runs may call: the static tools (built-in, tool modules, `REMOTE_TOOLS`),
 * offered to every tenant, then what the dynamic sources offer — to every tenant, or to one. A name is
 * taken by the first that offers it (static tools first, then sources in order, shared before a
 * tenant's own); a later offer of a taken name is withheld with `tool.name_taken`. Another tenant's
 * tools are never visible.
 */
export class ToolCatalog implements ToolLookup {
  constructor(
    private readonly base: ToolRegistry,
    private readonly sources: readonly DynamicToolSource[] = [],
  ) {}

  get(tenantId: string | undefined, name: string): AnyTool | undefined {
    return this.base.get(name) ?? this.index(tenantId).tools.get(name)?.tool;
  }

  async resolve(tenantId: string, name: string): Promise<AnyTool | undefined> {
    const found = this.get(tenantId, name);
    if (found) return found;
    await Promise.all(this.sources.map((s) => s.refresh?.()));
    return this.get(tenantId, name);
  }

  /** `tenantId` undefined: what every tenant is offered (the deployment's shared tools). */
  list(tenantId: string | undefined): { tool: AnyTool; scope: CatalogScope }[] {
    const statics = this.base.names().map((n) => ({ tool: this.base.get(n)!, scope: 'shared' as const }));
    return [...statics, ...this.index(tenantId).tools.values()].sort((a, b) => (a.tool.name < b.tool.name ? -1 : 1));
  }

  problems(tenantId: string | undefined): ToolProblem[] {
    const own = this.sources
      .flatMap((s) => s.problems())
      .filter((p) => p.tenant === undefined || p.tenant === tenantId);
    return [...own, ...this.index(tenantId).problems];
  }

  private index(tenantId: string | undefined) {
    const tools = new Map<string, { tool: AnyTool; scope: CatalogScope }>();
    const problems: ToolProblem[] = [];
    const offers = this.sources.flatMap((s) => s.offered().map((o) => ({ ...o, source: s.id })));
    // Shared offers before a tenant's own: a tenant cannot shadow a tool every other tenant sees.
    const visible = [
      ...offers.filter((o) => o.tenant === undefined),
      ...(tenantId === undefined ? [] : offers.filter((o) => o.tenant === tenantId)),
    ];
    for (const offer of visible) {
      const name = offer.tool.name;
      const holder = this.base.get(name) ? (this.base.get(name)!.source ?? 'builtin') : tools.get(name)?.tool.source;
      if (holder) {
        if (holder !== offer.tool.source)
          problems.push({
            source: offer.source,
            tool: name,
            tenant: offer.tenant,
            code: 'tool.name_taken',
            message: `${offer.tool.source ?? offer.source} offers ${name}, which ${holder} already offers; withheld`,
          });
        continue;
      }
      tools.set(name, { tool: offer.tool, scope: offer.tenant === undefined ? 'shared' : 'tenant' });
    }
    return { tools, problems };
  }
}
