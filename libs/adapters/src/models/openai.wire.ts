import type { Json, JsonObject } from '@ratchet/contracts';

/**
 * The OpenAI Chat Completions wire format, as far as Ratchet speaks it (non-streaming, function tools).
 * The same shape is served by OpenAI, vLLM, Ollama (`/v1`), LM Studio and llama.cpp server.
 */

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface WireTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonObject };
}

/** The request body: the agent's `parameters` (temperature, max_tokens, …) plus the fields we own. */
export interface WireRequest {
  [parameter: string]: Json | WireMessage[] | WireTool[] | undefined;
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  stream: false;
}
