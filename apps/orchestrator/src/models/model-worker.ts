import type { ChatMessage, ModelCallCommand, ModelResultMessage } from '@ratchet/contracts';
import { PoisonMessageError, type ModelOutcome, type ModelProvider } from '@ratchet/domain';
import { SpanKind } from '@opentelemetry/api';
import { ATTR, contentCaptureEnabled, failpoint, inSpan, SPAN } from '@ratchet/platform';
import type { AgentCatalog } from '../agents/agent-catalog';
import type { ToolSpecs } from '../agents/catalog-tools';
import type { MemoryRecall, Recall } from './memory-recall';

/**
 * Calls the model for one model-call command and returns the result for the thread inbox. Holds no
 * state: if the process dies mid-call the command is redelivered and the call is simply made again
 * (model calls may repeat; the decider ignores the result of a replaced attempt).
 */
export class ModelWorker {
  constructor(
    private readonly agents: AgentCatalog,
    private readonly tools: ToolSpecs,
    private readonly providers: Record<string, ModelProvider>,
  ) {}

  /**
   * With `recall` and an agent that asks for it (`memory.recall: true`), recalled memory items join the
   * prompt as a system message after the instructions. That message lives only in this call; the result
   * names the items (namespace, key, version) in `recalled` so the log says what was used, not what it said.
   */
  async call(command: ModelCallCommand, signal?: AbortSignal, recall?: MemoryRecall): Promise<ModelResultMessage> {
    const stored = await this.agents.get(command.tenantId, command.agent, command.agentVersion);
    if (!stored)
      throw new PoisonMessageError(
        `agent ${command.agent} v${command.agentVersion} is not registered`,
        'agent.unknown',
      );
    const agent = stored.definition;
    const provider = this.providers[agent.model.provider];
    let outcome: ModelOutcome;
    let recalled: Recall | undefined;
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
      if (agent.memory.recall && recall) recalled = await recall.recall(command);
      const messages: ChatMessage[] = [
        ...(agent.instructions ? [{ role: 'system' as const, content: agent.instructions }] : []),
        ...(recalled?.messages ?? []),
        ...command.messages,
      ];
      // The schemas the tenant's catalog has now: a remote service's or MCP server's own.
      const tools = await this.tools.specs(
        command.tenantId,
        agent.tools.map((t) => t.name),
      );
      const modelName = agent.model.name;
      outcome = await inSpan(
        SPAN.modelCall(modelName),
        {
          [ATTR.genAiSystem]: agent.model.provider,
          [ATTR.genAiOperation]: 'chat',
          [ATTR.genAiRequestModel]: modelName,
          [ATTR.tenant]: command.tenantId,
          [ATTR.thread]: command.threadId,
          [ATTR.run]: command.runId,
          [ATTR.step]: command.step,
          [ATTR.attempt]: command.attempt,
        },
        async (span) => {
          failpoint('orchestrator.model-call');
          const result = await provider.complete({
            agent,
            messages,
            tools,
            step: command.step,
            ...(signal ? { signal } : {}),
          });
          if (result.status === 'ok') {
            span.setAttributes({
              [ATTR.genAiResponseModel]: result.model,
              [ATTR.genAiInputTokens]: result.usage.inputTokens,
              [ATTR.genAiOutputTokens]: result.usage.outputTokens,
              [ATTR.outcome]: result.toolCalls.length > 0 ? 'tool_calls' : 'answer',
            });
            // Prompts and completions stay out of spans unless an operator turns capture on.
            if (contentCaptureEnabled())
              span.setAttribute('gen_ai.completion', result.content ?? JSON.stringify(result.toolCalls));
          } else {
            span.setAttributes({ [ATTR.outcome]: `error:${result.error.code}` });
          }
          return result;
        },
        { kind: SpanKind.CLIENT },
      );
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
      ...(recalled?.recalled ? { recalled: recalled.recalled } : {}),
    };
  }
}
