import type { AgentToolConfig } from '@ratchet/contracts';
import type { ThreadState } from '@ratchet/domain';
import type { AgentCatalog } from './agent-catalog';

/**
 * What the pinned agent version says of one of its tools: its `config` (sent to the executor with each
 * call) and the role that decides its approvals (also the escalations of its uncertain effects).
 */
export type AgentToolConfigLookup = (
  agent: string,
  agentVersion: number,
  tool: string,
) => { config?: AgentToolConfig | undefined; approvalRole: string } | undefined;

/** Per-tool settings of the active run's pinned agent version (versions never change: cached). */
export function toolConfigsOf(
  catalog: AgentCatalog,
): (state: ThreadState) => Promise<AgentToolConfigLookup | undefined> {
  return async (state) => {
    const run = state.active;
    if (!run || !state.tenantId) return undefined;
    const agent = await catalog.get(state.tenantId, run.agent, run.agentVersion);
    if (!agent) return undefined;
    return (name, version, tool) =>
      name === agent.name && version === agent.version
        ? toolEntry(agent.definition.tools.find((t) => t.name === tool))
        : undefined;
  };
}

function toolEntry(tool: { config?: AgentToolConfig | undefined; approval: { role: string } } | undefined) {
  return tool && { config: tool.config, approvalRole: tool.approval.role };
}
