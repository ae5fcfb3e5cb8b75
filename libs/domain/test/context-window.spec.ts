import type { ChatMessage } from '@ratchet/contracts';
import { boundContext } from '../src';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const said = (content: string): ChatMessage => ({ role: 'assistant', content, toolCalls: [] });
const asks = (id: string): ChatMessage => ({
  role: 'assistant',
  content: null,
  toolCalls: [{ id, name: 't', args: {} }],
});
const result = (id: string): ChatMessage => ({
  role: 'tool',
  toolCallId: id,
  name: 't',
  content: 'ok',
  isError: false,
});

describe('context window (what of the conversation a model is sent)', () => {
  const conversation = [
    user('q1'),
    said('a1'),
    user('q2'),
    asks('c1'),
    result('c1'),
    asks('c2'),
    result('c2'),
    said('a2'),
  ];

  it('given no bounds, sends everything', () => {
    expect(boundContext(conversation, {})).toEqual({ messages: conversation, sent: 8, of: 8 });
  });

  it('given maxMessages, sends the tail, never starting with a tool result', () => {
    const bounded = boundContext(conversation, { maxMessages: 4 });
    // The tail would start with result('c1'): its call is not there, so it starts after it; the user's
    // question comes first so the model keeps its task.
    expect(bounded.messages).toEqual([user('q2'), asks('c2'), result('c2'), said('a2')]);
    expect([bounded.sent, bounded.of]).toEqual([4, 8]);
  });

  it('given maxTokens, drops the oldest messages until the rest fits, keeping the last one', () => {
    const long = [user('x'.repeat(4000)), said('y'.repeat(4000)), user('short question')];
    expect(boundContext(long, { maxTokens: 100 }).messages).toEqual([user('short question')]);
    expect(boundContext([user('z'.repeat(40_000))], { maxTokens: 10 }).messages).toHaveLength(1);
  });
});
