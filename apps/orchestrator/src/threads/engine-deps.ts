import type { ThreadState } from '@ratchet/domain';
import type { ThreadEngineDeps } from '@ratchet/engine';
import type { AgentToolConfigLookup } from '@ratchet/agents';
import { orchestratorOutgoing } from './outbox-messages';
import { inboxToCommand } from './to-command';

/**
 * The engine's dependencies with the orchestrator's own parts filled in: what a decision's requests
 * become on the bus (with the pinned agent version's tool settings), and what an inbox message becomes
 * as a command.
 */
export function orchestratorEngineDeps(
  deps: Omit<ThreadEngineDeps, 'outgoing' | 'toCommand'> & {
    /** The pinned agent version's per-tool settings, sent with each tool call (none by default). */
    toolConfigs?: (state: ThreadState) => Promise<AgentToolConfigLookup | undefined>;
  },
): ThreadEngineDeps {
  const { toolConfigs = async () => undefined, ...rest } = deps;
  return { ...rest, outgoing: orchestratorOutgoing(deps.subjects, toolConfigs), toCommand: inboxToCommand };
}
