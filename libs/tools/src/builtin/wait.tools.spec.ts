import type { ToolCallCommand } from '@ratchet/contracts';
import { runTool } from '../run-tool';
import { waitpointIdFor } from '../waitpoints';
import { waitExternal } from './wait.tools';

const logger = { info: () => undefined, warn: () => undefined };
const NOW = new Date('2027-01-01T12:00:00.000Z');
const call = (toolConfig: ToolCallCommand['toolConfig'], over: Partial<ToolCallCommand> = {}): ToolCallCommand => ({
  kind: 'tool.call',
  commandId: 'c1',
  tenantId: 'acme',
  threadId: 'th-1',
  runId: 'run-1',
  step: 2,
  callId: 'call-1',
  tool: 'wait.external',
  args: { about: 'the build of main' },
  idempotencyKey: 'acme:th-1:run-1:2:call-1',
  principal: { id: 'alice', roles: ['runner'] },
  ...(toolConfig ? { toolConfig } : {}),
  ...over,
});
const services = { logger, now: () => NOW };

describe('wait.external', () => {
  it('given the agent says how long, what an expiry does and the schema, then the call opens that waitpoint', async () => {
    const result = { type: 'object', properties: { build: { type: 'integer' } } };
    const outcome = await runTool(
      waitExternal,
      call({ waitpoint: { ttlSeconds: 600, onExpiry: 'fail_run', result } }),
      services,
    );
    expect(outcome).toEqual({
      status: 'waiting',
      waitpoint: {
        id: waitpointIdFor('acme', 'run-1', 2, 'call-1'),
        expiresAt: '2027-01-01T12:10:00.000Z',
        onExpiry: 'fail_run',
        resultSchema: result,
      },
    });
  });

  it('given no settings, then it waits 24 h and tells the model on expiry; any JSON completes it', async () => {
    expect(await runTool(waitExternal, call(undefined), services)).toEqual({
      status: 'waiting',
      waitpoint: { id: expect.stringMatching(/^wp_/), expiresAt: '2027-01-02T12:00:00.000Z', onExpiry: 'tool_error' },
    });
  });

  it('derives one id per call: the same call again opens the same waitpoint, another step or tenant another', () => {
    const id = waitpointIdFor('acme', 'run-1', 2, 'call-1');
    expect(waitpointIdFor('acme', 'run-1', 2, 'call-1')).toBe(id);
    expect(waitpointIdFor('acme', 'run-1', 3, 'call-1')).not.toBe(id);
    expect(waitpointIdFor('other', 'run-1', 2, 'call-1')).not.toBe(id);
  });

  it('given a result schema that does not compile, then the call fails naming it, and no waitpoint is opened', async () => {
    const outcome = await runTool(
      waitExternal,
      call({ waitpoint: { ttlSeconds: 60, onExpiry: 'tool_error', result: { type: 12 } } }),
      services,
    );
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'waitpoint.invalid_schema' } });
  });

  it('refuses a call that does not say what it waits for', async () => {
    const outcome = await runTool(waitExternal, call(undefined, { args: {} }), services);
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'invalid_arguments' } });
  });
});
