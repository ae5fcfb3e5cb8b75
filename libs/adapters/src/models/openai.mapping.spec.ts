import type { ChatMessage, ToolSpec } from '@ratchet/contracts';
import {
  buildRequestBody,
  buildToolNameTable,
  fromWireToolName,
  parseCompletion,
  toWireMessages,
  toWireToolName,
  toWireTools,
  type ToolNameTable,
} from './openai.mapping';

const weather: ToolSpec = {
  name: 'demo.weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const clock: ToolSpec = { name: 'clock', description: 'Now', parameters: {} };

function table(tools: ToolSpec[] = [weather, clock]): ToolNameTable {
  const t = buildToolNameTable(tools);
  if ('error' in t) throw new Error(t.error.message);
  return t;
}

const ctx = { tools: table(), step: 3, fallbackModel: 'configured-model' };

function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    ...extra,
  });
}

describe('OpenAI mapping: tool names', () => {
  it('maps dots reversibly to a name OpenAI accepts', () => {
    expect(toWireToolName('demo.weather')).toBe('demo__weather');
    expect(toWireToolName('a.b.c-d_e')).toBe('a__b__c-d_e');
    expect(fromWireToolName('demo__weather')).toBe('demo.weather');
    for (const name of ['demo.weather', 'x.y.z', 'plain', 'with-dash.and_underscore']) {
      expect(toWireToolName(name)).toMatch(/^[a-zA-Z0-9_-]+$/);
      expect(fromWireToolName(toWireToolName(name))).toBe(name);
    }
  });

  it('maps back exactly through the table of offered tools, even names with "__" of their own', () => {
    const t = table([{ name: 'raw__name', description: '', parameters: {} }, weather]);
    expect(t.fromWire.get('raw__name')).toBe('raw__name');
    expect(t.fromWire.get('demo__weather')).toBe('demo.weather');
    expect(t.toWire.get('demo.weather')).toBe('demo__weather');
  });

  it('refuses two tools whose wire names collide, and names that cannot be mapped', () => {
    const collision = buildToolNameTable([weather, { name: 'demo__weather', description: '', parameters: {} }]);
    expect(collision).toEqual({ error: expect.objectContaining({ code: 'tool_name_collision', retryable: false }) });
    const invalid = buildToolNameTable([{ name: 'has space', description: '', parameters: {} }]);
    expect(invalid).toEqual({ error: expect.objectContaining({ code: 'invalid_tool_name', retryable: false }) });
  });
});

describe('OpenAI mapping: requests', () => {
  const transcript: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'weather in Oslo and Rome' },
    {
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'c1', name: 'demo.weather', args: { city: 'Oslo' } },
        { id: 'c2', name: 'demo.weather', args: { city: 'Rome' } },
      ],
    },
    { role: 'tool', toolCallId: 'c1', name: 'demo.weather', content: '{"forecast":"sunny"}', isError: false },
    { role: 'tool', toolCallId: 'c2', name: 'demo.weather', content: '{"error":"x","message":"y"}', isError: true },
    { role: 'assistant', content: 'Sunny in Oslo.', toolCalls: [] },
  ];

  it('maps every role, assistant tool calls with JSON-string arguments and tool results by call id', () => {
    expect(toWireMessages(transcript)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'weather in Oslo and Rome' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'demo__weather', arguments: '{"city":"Oslo"}' } },
          { id: 'c2', type: 'function', function: { name: 'demo__weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"forecast":"sunny"}' },
      { role: 'tool', tool_call_id: 'c2', content: '{"error":"x","message":"y"}' },
      { role: 'assistant', content: 'Sunny in Oslo.' },
    ]);
  });

  it('maps tool specs to function tools, with an object schema for parameterless tools', () => {
    expect(toWireTools([weather, clock])).toEqual([
      {
        type: 'function',
        function: { name: 'demo__weather', description: 'Weather for a city', parameters: weather.parameters },
      },
      {
        type: 'function',
        function: { name: 'clock', description: 'Now', parameters: { type: 'object', properties: {} } },
      },
    ]);
  });

  it('puts the agent parameters in the body without letting them replace model, messages, tools or stream', () => {
    const body = buildRequestBody(
      'gpt-4o-mini',
      { temperature: 0.2, max_tokens: 256, model: 'other', stream: true, messages: [] },
      transcript.slice(0, 2),
      [weather],
    );
    expect(body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 256, stream: false });
    expect(body.messages).toHaveLength(2);
    expect(body.tools).toHaveLength(1);
  });

  it('omits tools when none are offered', () => {
    const body = buildRequestBody('m', { tools: [] }, [{ role: 'user', content: 'hi' }], []);
    expect(body).not.toHaveProperty('tools');
  });
});

describe('OpenAI mapping: responses', () => {
  it('reads text, usage and the model', () => {
    expect(parseCompletion(completion({ content: 'Hello.' }), ctx)).toEqual({
      status: 'ok',
      content: 'Hello.',
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 5 },
      model: 'gpt-test',
    });
  });

  it('reads parallel tool calls, mapping names back and parsing arguments', () => {
    const out = parseCompletion(
      completion({
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'demo__weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_b', type: 'function', function: { name: 'clock', arguments: '' } },
        ],
      }),
      ctx,
    );
    expect(out).toMatchObject({
      status: 'ok',
      content: null,
      toolCalls: [
        { id: 'call_a', name: 'demo.weather', args: { city: 'Oslo' } },
        { id: 'call_b', name: 'clock', args: {} },
      ],
    });
  });

  it('tolerates what local servers do: missing ids, object arguments, "" content, content parts, no usage, no model', () => {
    const out = parseCompletion(
      JSON.stringify({
        choices: [
          {
            message: {
              content: '',
              tool_calls: [{ function: { name: 'demo__weather', arguments: { city: 'Rome' } } }],
            },
          },
        ],
      }),
      ctx,
    );
    expect(out).toEqual({
      status: 'ok',
      content: null,
      toolCalls: [{ id: 'call_3_1', name: 'demo.weather', args: { city: 'Rome' } }],
      usage: { inputTokens: 0, outputTokens: 0 },
      model: 'configured-model',
    });
    const parts = parseCompletion(
      completion({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
      ctx,
    );
    expect(parts).toMatchObject({ status: 'ok', content: 'ab' });
  });

  it('uses a refusal as the answer when there is no content', () => {
    expect(parseCompletion(completion({ content: null, refusal: 'I cannot help.' }), ctx)).toMatchObject({
      status: 'ok',
      content: 'I cannot help.',
    });
  });

  it.each([
    ['not JSON', '<html>502 Bad Gateway</html>', /not JSON/],
    ['not an object', '[1,2]', /not a JSON object/],
    ['no choices', JSON.stringify({ choices: [] }), /no choices/],
    ['an error body with 200', JSON.stringify({ error: { message: 'overloaded' } }), /no choices.*overloaded/],
    ['no message', JSON.stringify({ choices: [{}] }), /no message/],
    [
      'invalid JSON arguments',
      completion({ tool_calls: [{ id: 'x1', function: { name: 'demo__weather', arguments: '{"city": "Os' } }] }),
      /arguments of tool call "x1" to demo\.weather are not a valid JSON object/,
    ],
    [
      'arguments that are JSON but not an object',
      completion({ tool_calls: [{ id: 'x1', function: { name: 'clock', arguments: '[1]' } }] }),
      /not a valid JSON object/,
    ],
    [
      'a tool that was not offered',
      completion({ tool_calls: [{ id: 'x1', function: { name: 'rm_rf', arguments: '{}' } }] }),
      /"rm_rf", a tool that was not offered/,
    ],
    [
      'an unmapped dotted name',
      completion({ tool_calls: [{ id: 'x1', function: { name: 'demo.weather', arguments: '{}' } }] }),
      /not offered/,
    ],
    [
      'duplicate call ids',
      completion({
        tool_calls: [
          { id: 'same', function: { name: 'clock', arguments: '{}' } },
          { id: 'same', function: { name: 'clock', arguments: '{}' } },
        ],
      }),
      /share the id "same"/,
    ],
    ['tool_calls not an array', completion({ tool_calls: {} }), /not an array/],
  ])('%s → malformed_response (retryable), never a throw', (_, body, message) => {
    const out = parseCompletion(body, ctx);
    expect(out).toEqual({
      status: 'error',
      error: { code: 'malformed_response', message: expect.stringMatching(message), retryable: true },
    });
  });

  it('never puts arguments into the error message', () => {
    const out = parseCompletion(
      completion({ tool_calls: [{ id: 'x', function: { name: 'clock', arguments: '{"secret": "patient record' } }] }),
      ctx,
    );
    expect(out.status === 'error' && out.error.message).not.toContain('patient');
  });
});
