import { genAiProviderName, toolCallAttributes } from './attributes';

describe('gen_ai.provider.name', () => {
  it('names the provider that really answers, from the model config', () => {
    expect(genAiProviderName({ provider: 'openai' })).toBe('openai');
    expect(genAiProviderName({ provider: 'openai', baseUrl: 'https://api.openai.com/v1' })).toBe('openai');
    expect(genAiProviderName({ provider: 'openai', baseUrl: 'https://api.anthropic.com/v1/' })).toBe('anthropic');
    expect(genAiProviderName({ provider: 'openai', baseUrl: 'https://acme.openai.azure.com/openai/v1' })).toBe(
      'azure.ai.openai',
    );
    expect(
      genAiProviderName({ provider: 'openai', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai' }),
    ).toBe('gcp.gemini');
    expect(genAiProviderName({ provider: 'openai', baseUrl: 'https://api.mistral.ai/v1' })).toBe('mistral_ai');
    expect(genAiProviderName({ provider: 'openai', baseUrl: 'https://api.groq.com/openai/v1' })).toBe('groq');
  });

  it('says _OTHER for a server it cannot name, and marks the scripted model as ours', () => {
    expect(genAiProviderName({ provider: 'openai', baseUrl: 'http://127.0.0.1:11434/v1' })).toBe('_OTHER');
    expect(genAiProviderName({ provider: 'openai', baseUrl: 'https://api.openai.com.evil.example/v1' })).toBe('_OTHER');
    expect(genAiProviderName({ provider: 'scripted' })).toBe('ratchet.scripted');
  });
});

describe('execute_tool attributes', () => {
  it('carry the GenAI tool names and the run they belong to', () => {
    expect(
      toolCallAttributes({
        tool: 'demo.weather',
        callId: 'call_1',
        tenantId: 'acme',
        threadId: 'th',
        runId: 'run',
        step: 2,
      }),
    ).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'demo.weather',
      'gen_ai.tool.call.id': 'call_1',
      'ratchet.tool.name': 'demo.weather',
      'ratchet.tool.call_id': 'call_1',
      'ratchet.tenant': 'acme',
      'ratchet.thread': 'th',
      'ratchet.run': 'run',
      'ratchet.step': 2,
    });
  });
});
