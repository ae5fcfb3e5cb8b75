import type { ChatMessage } from '@ratchet/contracts';

/** What of a conversation a model is sent (the agent's `context`); the log keeps all of it. */
export interface ContextBounds {
  maxMessages?: number | undefined;
  maxTokens?: number | undefined;
}

/** A rough token count (4 characters a token): enough to bound a prompt, not to bill by. */
export function approxTokens(message: ChatMessage): number {
  const text =
    message.role === 'assistant'
      ? `${message.content ?? ''}${message.toolCalls.length > 0 ? JSON.stringify(message.toolCalls) : ''}`
      : message.content;
  return Math.ceil(text.length / 4) + 4;
}

/**
 * The tail of the conversation within the bounds: the last `maxMessages` messages, fewer while they
 * hold more than `maxTokens`. It never starts with a tool result (its call would be missing), and when
 * the tail holds no user message the latest one before it comes first, so the model keeps its task.
 * The last message is always sent. Pure.
 */
export function boundContext(
  messages: readonly ChatMessage[],
  bounds: ContextBounds,
): { messages: ChatMessage[]; sent: number; of: number } {
  const of = messages.length;
  if (of === 0 || (bounds.maxMessages === undefined && bounds.maxTokens === undefined)) {
    return { messages: [...messages], sent: of, of };
  }
  let start = bounds.maxMessages === undefined ? 0 : Math.max(0, of - bounds.maxMessages);
  if (bounds.maxTokens !== undefined) {
    let tokens = messages.slice(start).reduce((n, m) => n + approxTokens(m), 0);
    while (start < of - 1 && tokens > bounds.maxTokens) tokens -= approxTokens(messages[start++]!);
  }
  while (start < of - 1 && messages[start]!.role === 'tool') start++;
  const tail = messages.slice(start);
  if (start > 0 && !tail.some((m) => m.role === 'user')) {
    for (let i = start - 1; i >= 0; i--) {
      if (messages[i]!.role === 'user') {
        tail.unshift(messages[i]!);
        break;
      }
    }
  }
  return { messages: tail, sent: tail.length, of };
}
