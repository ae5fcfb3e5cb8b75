/**
 * Which tool names an agent may list: the orchestrator's own tools (built-in and tool modules) and,
 * for the rest, the tool executor's catalog of the tenant (remote tool services, MCP servers).
 * `tenant` undefined: the deployment's shared catalog (what every tenant is offered).
 */
export interface ToolDirectory {
  unknown(tenant: string | undefined, names: readonly string[]): Promise<{ missing: string[]; known: string[] }>;
}

/** An agent lists a tool that no source offers (to its tenant). Terminal: the definition must change. */
export class UnknownToolsError extends Error {
  readonly code = 'agent.unknown_tool';
  constructor(
    readonly source: string,
    readonly agent: string,
    readonly missing: readonly string[],
    readonly known: readonly string[],
  ) {
    super(
      `${source}: agent ${agent}: tools: unknown tool${missing.length > 1 ? 's' : ''} ${missing
        .map((m) => `"${m}"`)
        .join(', ')} (known: ${known.join(', ')})`,
    );
    this.name = 'UnknownToolsError';
  }
}
