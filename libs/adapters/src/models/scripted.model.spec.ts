import path from 'node:path';
import type { ChatMessage } from '@ratchet/contracts';
import { loadAgentDirectory } from '../agents';
import { ScriptedModel } from './scripted.model';

const agentsDir = path.resolve(__dirname, '../../../../agents');

describe('scripted model (the offline default)', () => {
  const model = new ScriptedModel();
  async function demo() {
    const agents = await loadAgentDirectory(agentsDir);
    const agent = agents.find((a) => a.name === 'demo');
    if (!agent) throw new Error('demo agent missing');
    return agent;
  }

  it('calls the tool a rule names, with arguments filled from the message', async () => {
    const out = await model.complete({
      agent: await demo(),
      step: 1,
      tools: [],
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    });
    expect(out).toMatchObject({
      status: 'ok',
      content: null,
      toolCalls: [{ id: 'call_1_1', name: 'demo.weather', args: { city: 'Paris' } }],
    });
  });

  it('asks for parallel calls when a rule lists several', async () => {
    const out = await model.complete({
      agent: await demo(),
      step: 1,
      tools: [],
      messages: [{ role: 'user', content: 'weather in Oslo and Rome' }],
    });
    expect(out.status === 'ok' && out.toolCalls.map((c) => c.args)).toEqual([{ city: 'Oslo' }, { city: 'Rome' }]);
  });

  it('answers from the tool results once they are in', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'weather in Oslo' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'demo.weather', args: { city: 'Oslo' } }] },
      { role: 'tool', toolCallId: 'c1', name: 'demo.weather', content: '{"forecast":"sunny"}', isError: false },
    ];
    const out = await model.complete({ agent: await demo(), step: 2, tools: [], messages });
    expect(out).toMatchObject({ status: 'ok', toolCalls: [], content: 'Here is what I found: {"forecast":"sunny"}' });
  });

  it('is deterministic', async () => {
    const req = { agent: await demo(), step: 1, tools: [], messages: [{ role: 'user' as const, content: 'hi' }] };
    expect(await model.complete(req)).toEqual(await model.complete(req));
  });

  it('loops the bench agent for ten tool steps, then answers', async () => {
    const bench = (await loadAgentDirectory(agentsDir)).find((a) => a.name === 'bench');
    if (!bench) throw new Error('bench agent missing');
    const at = (step: number) =>
      model.complete({ agent: bench, step, tools: [], messages: [{ role: 'user', content: 'go' }] });
    expect(await at(10)).toMatchObject({ toolCalls: [{ name: 'bench.noop' }] });
    expect(await at(11)).toMatchObject({ toolCalls: [], content: 'done after 11 steps' });
  });
});
