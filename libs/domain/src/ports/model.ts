import type { AgentDefinition, ChatMessage, ToolSpec } from '@ratchet/contracts';
import type { ModelOutcome } from '../thread/thread.commands';

/** A piece of an answer as the model writes it (streaming): text, and pieces of tool calls by index. */
export interface ModelDelta {
  text?: string;
  toolCalls?: Array<{ index: number; id?: string; name?: string; args?: string }>;
}

export interface ModelRequest {
  agent: AgentDefinition;
  messages: ChatMessage[];
  tools: ToolSpec[];
  step: number;
  signal?: AbortSignal;
  /**
   * Given: the provider streams if it can, and hands each piece of the answer here as it arrives. The
   * outcome is still the whole answer (what the log records).
   */
  onDelta?: (delta: ModelDelta) => void;
}

/** One port for every model provider (scripted, OpenAI-compatible…). Failures come back as outcomes. */
export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelOutcome>;
}
