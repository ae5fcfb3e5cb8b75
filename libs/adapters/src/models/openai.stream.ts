import type { ModelDelta } from '@ratchet/domain';
import type { ToolNameTable } from './openai.mapping';

/**
 * Reads a streamed chat completion (Server-Sent Events: `data: {chunk}` lines, then `data: [DONE]`),
 * hands each piece of text and of tool-call arguments to `onDelta` as it arrives (tool names mapped
 * back to Ratchet's), and returns the whole completion in the shape of a non-streamed response, so
 * one parser (`parseCompletion`) validates both. Throws only if the body cannot be read (the caller
 * reports that as a network error); a chunk that is not JSON is skipped.
 */
export async function readChatStream(
  body: AsyncIterable<Uint8Array>,
  tools: ToolNameTable,
  onDelta: (delta: ModelDelta) => void,
): Promise<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let content: string | null = null;
  let refusal: string | undefined;
  let model: string | undefined;
  let usage: unknown;
  let finish: unknown;
  const calls = new Map<number, { id?: string; type?: string; name: string; args: string }>();
  let done = false;

  const onEvent = (data: string) => {
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof chunk['model'] === 'string') model = chunk['model'];
    if (chunk['usage']) usage = chunk['usage'];
    const choice = (Array.isArray(chunk['choices']) ? chunk['choices'][0] : undefined) as
      { delta?: Record<string, unknown>; finish_reason?: unknown } | undefined;
    if (!choice) return;
    if (choice.finish_reason) finish = choice.finish_reason;
    const delta = choice.delta ?? {};
    const out: ModelDelta = {};
    if (typeof delta['content'] === 'string' && delta['content'] !== '') {
      content = (content ?? '') + delta['content'];
      out.text = delta['content'];
    }
    if (typeof delta['refusal'] === 'string') refusal = (refusal ?? '') + delta['refusal'];
    if (Array.isArray(delta['tool_calls'])) {
      out.toolCalls = [];
      for (const raw of delta['tool_calls'] as Array<Record<string, unknown>>) {
        const index = typeof raw['index'] === 'number' ? raw['index'] : calls.size;
        const fn = (raw['function'] ?? {}) as Record<string, unknown>;
        const call = calls.get(index) ?? { name: '', args: '' };
        if (typeof raw['id'] === 'string') call.id = raw['id'];
        if (typeof raw['type'] === 'string') call.type = raw['type'];
        if (typeof fn['name'] === 'string') call.name += fn['name'];
        if (typeof fn['arguments'] === 'string') call.args += fn['arguments'];
        calls.set(index, call);
        out.toolCalls.push({
          index,
          ...(typeof raw['id'] === 'string' ? { id: raw['id'] } : {}),
          ...(typeof fn['name'] === 'string' ? { name: tools.fromWire.get(call.name) ?? call.name } : {}),
          ...(typeof fn['arguments'] === 'string' ? { args: fn['arguments'] } : {}),
        });
      }
    }
    if (out.text !== undefined || (out.toolCalls && out.toolCalls.length > 0)) onDelta(out);
  };

  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    // Events end with a blank line; servers use \n\n or \r\n\r\n.
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const data = frame
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) onEvent(data);
    }
    if (done) break;
  }
  if (buffer.trim().startsWith('data:')) onEvent(buffer.trim().slice(5).trim());
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, c]) => ({
      ...(c.id ? { id: c.id } : {}),
      type: c.type ?? 'function',
      function: { name: c.name, arguments: c.args },
    }));
  return JSON.stringify({
    ...(model ? { model } : {}),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(refusal !== undefined ? { refusal } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finish ?? null,
      },
    ],
    ...(usage ? { usage } : {}),
  });
}
