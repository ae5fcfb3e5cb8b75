import type { ChatMessage, ModelCallCommand, ModelResultMessage, ModelWaitMessage } from '@ratchet/contracts';
import {
  boundContext,
  costMicros,
  priceOf,
  TransientError,
  type ModelOutcome,
  type ModelProvider,
  type PriceTable,
} from '@ratchet/domain';
import { SpanKind } from '@opentelemetry/api';
import { ATTR, contentCaptureEnabled, failpoint, genAiProviderName, inSpan, SPAN } from '@ratchet/platform';
import type { AgentCatalog, ToolSpecs } from '@ratchet/agents';
import type { MemoryRecall, Recall } from './memory-recall';
import type { TokenStream } from './token-stream';
import { pause } from './abortable-wait';
import type { Held, ProviderLimits } from './provider-limits';
import type { TenantCapsGate } from './tenant-caps';

/** Reads the first `count` messages of a thread's conversation (a command that references its transcript). */
export type TranscriptReader = (tenantId: string, threadId: string, count: number) => Promise<ChatMessage[]>;

/**
 * Calls the model for one model-call command and returns the result for the thread inbox. Holds no
 * state: if the process dies mid-call the command is redelivered and the call is made again as the
 * step's next attempt. One call is one attempt: it ends by the agent's `stepTimeoutSeconds` at the
 * latest (the request is aborted, the outcome is a retryable `timeout`), so the next attempt never
 * starts while this one still runs.
 */
export class ModelWorker {
  constructor(
    private readonly agents: AgentCatalog,
    private readonly tools: ToolSpecs,
    private readonly providers: Record<string, ModelProvider>,
    private readonly transcripts?: TranscriptReader,
    private readonly tokens?: TokenStream,
    private readonly limits?: ProviderLimits,
    private readonly caps?: TenantCapsGate,
    /** Prices per model: each answer's usage carries its cost (none: unpriced). */
    private readonly prices: PriceTable = {},
  ) {}

  /** The conversation of a command: carried in it, or (a large one) read from the thread's messages. */
  private async transcriptOf(command: ModelCallCommand): Promise<ChatMessage[]> {
    if (command.messages) return command.messages;
    const count = command.transcript?.messages ?? 0;
    if (!this.transcripts)
      throw new Error(`model call ${command.commandId} references its transcript; no reader is configured`);
    const messages = await this.transcripts(command.tenantId, command.threadId, count);
    if (messages.length < count)
      throw new Error(`model call ${command.commandId}: ${count} messages referenced, ${messages.length} stored`);
    return messages.slice(0, count);
  }

  /**
   * With `recall` and an agent that asks for it (`memory.recall: true`), recalled memory items join the
   * prompt as a system message after the instructions. That message lives only in this call; the result
   * names the items (namespace, key, version) in `recalled` so the log says what was used, not what it said.
   */
  async call(
    command: ModelCallCommand,
    signal?: AbortSignal,
    recall?: MemoryRecall,
    /** The command's delivery (> 1: an earlier worker died in it; the log counts this as a later attempt). */
    delivery = 1,
  ): Promise<ModelResultMessage | ModelWaitMessage> {
    const stored = await this.agents.get(command.tenantId, command.agent, command.agentVersion);
    let outcome: ModelOutcome;
    let recalled: Recall | undefined;
    let context: { sent: number; of: number } | undefined;
    let limit: string | undefined;
    const agent = stored?.definition;
    const provider = agent && this.providers[agent.model.provider];
    if (!agent) {
      // Nothing a retry can mend: the run fails with the reason instead of waiting on a poison message.
      outcome = {
        status: 'error',
        error: {
          code: 'agent_unknown',
          message: `agent ${command.agent} v${command.agentVersion} is not registered`,
          retryable: false,
        },
      };
    } else if (!provider) {
      outcome = {
        status: 'error',
        error: {
          code: 'provider_unavailable',
          message: `no ${agent.model.provider} provider is configured`,
          retryable: false,
        },
      };
    } else {
      const transcript = await this.transcriptOf(command);
      if (agent.memory.recall && recall) recalled = await recall.recall(command, transcript);
      // The agent may bound what of the conversation the model is sent; the log keeps all of it.
      const bounded = boundContext(transcript, agent.context);
      context = { sent: bounded.sent, of: bounded.of };
      const messages: ChatMessage[] = [
        ...(agent.instructions ? [{ role: 'system' as const, content: agent.instructions }] : []),
        ...(recalled?.messages ?? []),
        ...bounded.messages,
      ];
      // The attempt's budget starts now: waiting for the tool catalog counts, the model is asked within it.
      const timeoutMs = agent.stepTimeoutSeconds * 1000;
      const deadline = AbortSignal.timeout(timeoutMs);
      const within = signal ? AbortSignal.any([signal, deadline]) : deadline;
      // The schemas the tenant's catalog has now: a remote service's or MCP server's own. A catalog that
      // does not answer (the executor restarting) is asked again within the attempt: no model call was
      // made, so it costs no attempt unless it outlasts the step's budget.
      const names = agent.tools.map((t) => t.name);
      const tools = await untilAnswered(() => this.tools.specs(command.tenantId, names), within).catch(
        (error: unknown) => {
          if (deadline.aborted && !signal?.aborted && error instanceof TransientError) return error;
          throw error;
        },
      );
      if (tools instanceof TransientError) {
        outcome = {
          status: 'error',
          error: {
            code: 'timeout',
            message: `${tools.message} within ${agent.stepTimeoutSeconds} s (the agent's stepTimeoutSeconds); the model was not called`,
            retryable: true,
          },
        };
        return this.resultOf(command, outcome, recalled, context);
      }
      // Last before the request: a provider limit (docs/flow-control.md) that has no room makes the call wait.
      const gate = this.limits && (await this.limits.ask(command, agent, { messages, tools }));
      if (gate && !gate.go) return this.waitOf(command, gate);
      // Then the tenant's token caps (docs/flow-control.md): the call reserves the most it can use, or is
      // not made and its run stops over the tenant's budget.
      const capped = this.caps && (await this.caps.ask(command, agent, { messages, tools }));
      if (capped && !capped.go) {
        await gate?.settle(0);
        outcome = { status: 'error', error: { code: capped.code, message: capped.message, retryable: false } };
        return this.resultOf(command, outcome, recalled, context);
      }
      const asked = capped?.agent ?? agent;
      const sink = this.tokens?.open(command, command.attempt + Math.max(0, delivery - 1));
      const modelName = agent.model.name;
      outcome = await inSpan(
        SPAN.modelCall(modelName),
        {
          [ATTR.genAiProvider]: genAiProviderName(agent.model),
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
          let result = await provider
            .complete({
              agent: asked,
              messages,
              tools,
              step: command.step,
              signal: within,
              ...(sink ? { onDelta: sink.delta } : {}),
            })
            .finally(() => sink?.close());
          if (deadline.aborted && !signal?.aborted && result.status === 'error') {
            // Aborted by this attempt's own deadline: a timeout, which a new attempt may get past.
            result = {
              status: 'error',
              error: {
                code: 'timeout',
                message: `no answer within ${agent.stepTimeoutSeconds} s (the agent's stepTimeoutSeconds); the request was aborted`,
                retryable: true,
              },
            };
          }
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
      if (outcome.status === 'ok') outcome = priced(outcome, this.prices, agent.model.name);
      await gate?.settle(outcome.status === 'ok' ? outcome.usage.inputTokens + outcome.usage.outputTokens : undefined);
      await capped?.settle(outcome);
      // A 429's wait and failure name the limit the key is under.
      limit = gate?.limit;
    }
    return this.resultOf(command, outcome, recalled, context, limit);
  }

  private waitOf(command: ModelCallCommand, held: Held): ModelWaitMessage {
    return {
      kind: 'model.wait',
      messageId: `${command.commandId}:wait`,
      ...answering(command),
      limit: held.limit,
      bound: held.bound,
      until: held.until,
    };
  }

  private resultOf(
    command: ModelCallCommand,
    outcome: ModelOutcome,
    recalled: Recall | undefined,
    context: { sent: number; of: number } | undefined,
    limit?: string,
  ): ModelResultMessage {
    return {
      kind: 'model.result',
      messageId: `${command.commandId}:result`,
      ...answering(command),
      outcome,
      ...(limit ? { limit } : {}),
      ...(recalled?.recalled ? { recalled: recalled.recalled } : {}),
      ...(context && context.sent < context.of ? { context: { sent: context.sent, of: context.of } } : {}),
    };
  }
}

/** Calls `ask` until it does not fail transiently, backing off from 250 ms to 2 s; stops when `signal` aborts. */
async function untilAnswered<T>(ask: () => Promise<T>, signal: AbortSignal): Promise<T> {
  for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      return await ask();
    } catch (error) {
      if (!(error instanceof TransientError) || signal.aborted) throw error;
      await pause(wait, signal).catch(() => {
        throw error;
      });
    }
  }
}

/** An answer with its cost, by the price of the model it reports (else the one it was asked for), if priced. */
function priced(
  outcome: Extract<ModelOutcome, { status: 'ok' }>,
  prices: PriceTable,
  asked: string,
): Extract<ModelOutcome, { status: 'ok' }> {
  const price = priceOf(prices, outcome.model) ?? priceOf(prices, asked);
  return price ? { ...outcome, usage: { ...outcome.usage, costMicros: costMicros(price, outcome.usage) } } : outcome;
}

/** The command an answer (a result or a wait) is for: its thread, run, command and step. */
function answering(command: ModelCallCommand) {
  return {
    tenantId: command.tenantId,
    threadId: command.threadId,
    runId: command.runId,
    commandId: command.commandId,
    step: command.step,
  };
}
