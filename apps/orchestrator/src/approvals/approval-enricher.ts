import type { CommandEnricher } from '@ratchet/engine';
import type { AgentCatalog } from '../agents/agent-catalog';
import { approvalNeeds } from './approval-policy';

/** Adds the approvals a model response needs under the pinned agent version's policy. */
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
    const approvals = approvalNeeds(agent.definition, run.runId, command.step, command.outcome.toolCalls, command.at);
    return Object.keys(approvals).length > 0 ? { ...command, approvals } : command;
  };
}
