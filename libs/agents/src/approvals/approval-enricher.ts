import type { Failure } from '@ratchet/contracts';
import type { CommandEnricher } from '@ratchet/engine';
import type { AgentCatalog } from '../catalog/agent-catalog';
import { approvalNeeds } from './approval-policy';
import { toolForbidden, toolPermission } from './tool-permission';

/**
 * Adds what a model response's calls need under the pinned agent version: a call to a tool whose entry
 * names roles the run's principal holds none of is refused (never sent, never asked about); the others
 * get the approvals the policy asks for.
 */
export function approvalEnricher(catalog: AgentCatalog): CommandEnricher {
  return async (state, command) => {
    if (
      command.type !== 'RecordModelResult' ||
      command.outcome.status !== 'ok' ||
      command.outcome.toolCalls.length === 0
    ) {
      return command;
    }
    const run = state.active;
    if (!run || run.runId !== command.runId) return command;
    const agent = await catalog.get(command.tenantId, run.agent, run.agentVersion);
    if (!agent) return command;
    const refusals: Record<string, Failure> = {};
    for (const call of command.outcome.toolCalls) {
      const spec = agent.definition.tools.find((t) => t.name === call.name);
      const permission = toolPermission(call.name, spec?.roles, run.principal.roles);
      if (!permission.allowed) refusals[call.id] = toolForbidden(permission.reason);
    }
    const allowed = command.outcome.toolCalls.filter((c) => !(c.id in refusals));
    const approvals = approvalNeeds(agent.definition, run.runId, command.step, allowed, command.at);
    return {
      ...command,
      ...(Object.keys(approvals).length > 0 ? { approvals } : {}),
      ...(Object.keys(refusals).length > 0 ? { refusals } : {}),
    };
  };
}
