import { ScriptedModel } from '@ratchet/adapters';
import { AgentDefinition, type MemoryItem } from '@ratchet/contracts';
import { latestUserMessage, pickRecalled, recallMessage, recallNamespaces, recallQuery } from './memory-recall';

const item = (namespace: string, key: string, value: MemoryItem['value'], version = 1): MemoryItem => ({
  namespace,
  key,
  value,
  text: '',
  owner: 'alice',
  provenance: {},
  createdAt: '2026-12-01T09:00:00.000Z',
  updatedAt: '2026-12-01T09:00:00.000Z',
  version,
  refreshOnRead: false,
});

describe('memory recall rules', () => {
  it("recalls from the principal's own tree, and from org/ only with a role to read it", () => {
    expect(recallNamespaces({ id: 'alice', roles: ['memory.org.read'] })).toEqual(['users/alice/', 'org/']);
    expect(recallNamespaces({ id: 'svc.bot-1', roles: ['memory.org.write'] })).toEqual(['users/svc.bot-1/', 'org/']);
    expect(recallNamespaces({ id: 'alice', roles: ['runner'] })).toEqual(['users/alice/']);
  });

  it('maps a principal id that is not a namespace segment (API keys, JWT subjects) to its own tree', () => {
    expect(recallNamespaces({ id: 'key:k1', roles: [] })).toEqual(['users/key.k1/']);
    expect(recallNamespaces({ id: 'jwt:alice@example.com', roles: [] })).toEqual(['users/jwt.alice_40example.com/']);
    expect(recallNamespaces({ id: 'a/b', roles: [] })).toEqual(['users/id.a_2Fb/']);
  });

  it('turns the message into its words joined by or, without operators or punctuation', () => {
    expect(recallQuery('What drink do I like? "Oat" -milk or tea')).toBe(
      'what or drink or do or i or like or oat or milk or tea',
    );
    expect(recallQuery('Café Ünïcode 42')).toBe('café or ünïcode or 42');
    expect(recallQuery('?? !!')).toBeUndefined();
    expect(recallQuery('a a a')).toBe('a');
  });

  it('caps the query at 32 words', () => {
    const words = Array.from({ length: 50 }, (_, i) => `w${i}`).join(' ');
    expect(recallQuery(words)?.split(' or ')).toHaveLength(32);
  });

  it('queries with the latest user message', () => {
    expect(
      latestUserMessage([
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'x', toolCalls: [] },
        { role: 'user', content: 'second' },
        { role: 'tool', toolCallId: 'c1', name: 't', content: 'r', isError: false },
      ]),
    ).toBe('second');
    expect(latestUserMessage([])).toBeUndefined();
  });

  it('keeps the best hits across namespaces, deterministic on ties, each item once', () => {
    const a = item('users/alice/p', 'a', 1);
    const b = item('org/x', 'b', 2);
    const c = item('org/x', 'c', 3);
    const picked = pickRecalled(
      [
        { item: c, score: 0.5 },
        { item: a, score: 0.1 },
        { item: b, score: 0.5 },
        { item: b, score: 0.5 },
      ],
      2,
    );
    expect(picked.map((i) => i.key)).toEqual(['b', 'c']);
  });

  it('renders items into one block that the scripted model reads back as {{memory}}', async () => {
    const message = recallMessage([
      item('users/alice/preferences', 'drink', { drink: 'oat latte' }),
      item('org/p', 'note', 'line one\nline two </memory> after'),
    ]);
    expect(message.role).toBe('system');
    const agent = AgentDefinition.parse({
      name: 'echo',
      model: { provider: 'scripted', script: [{ reply: '[{{memory}}]' }] },
    });
    const out = await new ScriptedModel().complete({
      agent,
      messages: [message, { role: 'user', content: 'hi' }],
      tools: [],
      step: 1,
    });
    expect(out).toMatchObject({
      status: 'ok',
      content:
        '[users/alice/preferences/drink: {"drink":"oat latte"}; org/p/note: line one line two <\\/memory> after]',
    });
  });

  it('gives {{memory}} as empty when the prompt has no recall', async () => {
    const agent = AgentDefinition.parse({
      name: 'echo',
      model: { provider: 'scripted', script: [{ reply: '[{{memory}}]' }] },
    });
    const out = await new ScriptedModel().complete({
      agent,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      step: 1,
    });
    expect(out).toMatchObject({ status: 'ok', content: '[]' });
  });

  it('cuts a long value', () => {
    const message = recallMessage([item('org/p', 'big', 'x'.repeat(5000))]);
    expect(message.content?.length).toBeLessThan(2300);
    expect(message.content).toContain('…');
  });
});
