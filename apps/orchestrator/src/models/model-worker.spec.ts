import { AgentDefinition, type ModelCallCommand } from '@ratchet/contracts';
import { TransientError, type ModelProvider, type ModelRequest } from '@ratchet/domain';
import type { AgentCatalog, ToolSpecs } from '@ratchet/agents';
import { ModelWorker } from './model-worker';

/*
 * A tool catalog that does not answer (the executor restarting) is no model call: the worker asks it
 * again within the attempt's budget, and the provider is called once the catalog answers. Only a catalog
 * that stays away for the whole step budget ends the attempt (a retryable timeout, the model never called).
 */
const agent = (stepTimeoutSeconds: number) =>
  AgentDefinition.parse({
    name: 'helper',
    model: { provider: 'openai', name: 'm' },
    stepTimeoutSeconds,
    tools: [{ name: 'far.lookup' }],
  });
const command: ModelCallCommand = {
  kind: 'model.call',
  commandId: 'cmd-1',
  tenantId: 'demo',
  threadId: 'th_1',
  runId: 'run_1',
  step: 1,
  attempt: 1,
  agent: 'helper',
  agentVersion: 1,
  messages: [{ role: 'user', content: 'hi' }],
};

function given(stepTimeoutSeconds: number, failures: number) {
  const asked: number[] = [];
  const requests: ModelRequest[] = [];
  const catalog = {
    get: async () => ({
      name: 'helper',
      version: 1,
      digest: 'd',
      scope: 'tenant',
      definition: agent(stepTimeoutSeconds),
    }),
  } as unknown as AgentCatalog;
  const tools: ToolSpecs = {
    specs: async () => {
      asked.push(asked.length + 1);
      if (asked.length <= failures)
        throw new TransientError('the tool catalog did not answer', 'tools.catalog_unavailable');
      return [{ name: 'far.lookup', description: 'looks up', parameters: { type: 'object' } }];
    },
  };
  const provider: ModelProvider = {
    name: 'fake',
    complete: async (request) => {
      requests.push(request);
      return { status: 'ok', content: 'hello', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 }, model: 'm' };
    },
  };
  return { worker: new ModelWorker(catalog, tools, { openai: provider }), asked, requests };
}

describe('ModelWorker and the tool catalog', () => {
  it('asks a catalog that did not answer again and then calls the model once, with its schemas', async () => {
    const { worker, asked, requests } = given(30, 2);
    const result = await worker.call(command);
    expect(result).toMatchObject({ kind: 'model.result', outcome: { status: 'ok', content: 'hello' } });
    expect(asked).toHaveLength(3);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.tools.map((t) => t.name)).toEqual(['far.lookup']);
  });

  it('ends the attempt as a retryable timeout, without a model call, when the catalog stays away for the step budget', async () => {
    const { worker, requests } = given(1, Number.POSITIVE_INFINITY);
    const result = await worker.call(command);
    expect(result).toMatchObject({
      outcome: {
        status: 'error',
        error: { code: 'timeout', retryable: true, message: expect.stringContaining('the model was not called') },
      },
    });
    expect(requests).toHaveLength(0);
  });

  it('stops asking when the call is stopped (its run ended), without a model call', async () => {
    const { worker, requests } = given(30, Number.POSITIVE_INFINITY);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('run stopped')), 300);
    await expect(worker.call(command, stop.signal)).rejects.toThrow('the tool catalog did not answer');
    expect(requests).toHaveLength(0);
  });
});
