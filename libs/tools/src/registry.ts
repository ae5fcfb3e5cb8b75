import type { ToolSpec } from '@ratchet/contracts';
import { AnyTool, toolSpec } from './tool';

export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  /** A tool's spec never changes once registered: its JSON Schema is built once (every model call sends it). */
  private readonly specCache = new Map<string, ToolSpec>();

  constructor(tools: readonly AnyTool[] = []) {
    for (const t of tools) this.register(t);
  }

  register(tool: AnyTool): void {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.tools.set(tool.name, tool);
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  /** The same tools for every tenant (a `ToolLookup`, e.g. for a tool executor without dynamic sources). */
  resolve(_tenantId: string, name: string): Promise<AnyTool | undefined> {
    return Promise.resolve(this.tools.get(name));
  }

  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  /** Specs for the named tools; unknown names are reported, not skipped. */
  specs(names: readonly string[]): ToolSpec[] {
    return names.map((n) => {
      const t = this.tools.get(n);
      if (!t) throw new Error(`unknown tool ${JSON.stringify(n)}; known tools: ${this.names().join(', ')}`);
      let spec = this.specCache.get(n);
      if (!spec) this.specCache.set(n, (spec = toolSpec(t)));
      return spec;
    });
  }
}
