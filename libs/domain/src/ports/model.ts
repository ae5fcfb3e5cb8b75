import type { AgentDefinition, ChatMessage, ToolSpec } from '@ratchet/contracts';
import type { ModelOutcome } from '../thread/thread.commands';

export interface ModelRequest {
  agent: AgentDefinition;
  messages: ChatMessage[];
  tools: ToolSpec[];
  step: number;
  signal?: AbortSignal;
}

/** One port for every model provider (scripted, OpenAI-compatible…). Failures come back as outcomes. */
export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelOutcome>;
}
