import type { ChatMessage, ModelCallCommand, ModelResultMessage } from '@ratchet/contracts';
import { PoisonMessageError, type ModelOutcome, type ModelProvider } from '@ratchet/domain';
import type { ToolRegistry } from '@ratchet/tools';
import type { AgentCatalog } from '../agents/agent-catalog';

/**
 * Calls the model for one model-call command and returns the result for the thread inbox. Holds no
 * state: if the process dies mid-call the command is redelivered and the call is simply made again
 * (model calls may repeat; the decider ignores the result of a replaced attempt).
 */
export class ModelWorker {
  constructor(
    private readonly agents: AgentCatalog,
    private readonly tools: ToolRegistry,
    private readonly providers: Record<string, ModelProvider>,
  ) {}

  async call(command: ModelCallCommand, signal?: AbortSignal): Promise<ModelResultMessage> {
    const stored = await this.agents.get(command.agent, command.agentVersion);
    if (!stored)
      throw new PoisonMessageError(
        `agent ${command.agent} v${command.agentVersion} is not registered`,
        'agent.unknown',
      );
    const agent = stored.definition;
    const provider = this.providers[agent.model.provider];
    let outcome: ModelOutcome;
    if (!provider) {
      outcome = {
        status: 'error',
        error: {
          code: 'provider_unavailable',
          message: `no ${agent.model.provider} provider is configured`,
          retryable: false,
        },
      };
    } else {
      const messages: ChatMessage[] = agent.instructions
        ? [{ role: 'system', content: agent.instructions }, ...command.messages]
        : command.messages;
      const tools = this.tools.specs(agent.tools.map((t) => t.name));
      outcome = await provider.complete({ agent, messages, tools, step: command.step, ...(signal ? { signal } : {}) });
    }
    return {
      kind: 'model.result',
      messageId: `${command.commandId}:result`,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      commandId: command.commandId,
      step: command.step,
      outcome,
    };
  }
}
