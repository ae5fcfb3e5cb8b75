import type { ToolCall } from '@ratchet/contracts';
import { modelCommandId } from '../src';
import type { CancelRun, RecordModelResult, RecordToolResult, RequestRun } from '../src';
import { AT, TENANT, THREAD } from './decider.specification';

export function requestRun(runId: string, overrides: Partial<RequestRun> = {}): RequestRun {
  return {
    type: 'RequestRun',
    tenantId: TENANT,
    threadId: THREAD,
    at: AT,
    runId,
    requestId: `req-${runId}`,
    agent: 'demo',
    agentVersion: 1,
    maxSteps: 5,
    input: [{ role: 'user', content: 'hello' }],
    principal: { id: 'alice', roles: ['runner'] },
    concurrency: 'reject',
    metadata: {},
    ...overrides,
  };
}

export function modelAnswers(
  runId: string,
  step: number,
  toolCalls: ToolCall[] = [],
  content: string | null = 'done',
  attempt = 1,
): RecordModelResult {
  return {
    type: 'RecordModelResult',
    tenantId: TENANT,
    threadId: THREAD,
    at: AT,
    runId,
    step,
    commandId: modelCommandId(runId, step, attempt),
    outcome: { status: 'ok', content, toolCalls, usage: { inputTokens: 1, outputTokens: 1 }, model: 'scripted' },
  };
}

export function toolCompletes(
  runId: string,
  step: number,
  callId: string,
  result: unknown = { ok: true },
): RecordToolResult {
  return {
    type: 'RecordToolResult',
    tenantId: TENANT,
    threadId: THREAD,
    at: AT,
    runId,
    step,
    callId,
    outcome: { status: 'completed', result: result as never },
  };
}

export function toolFails(runId: string, step: number, callId: string, code = 'boom'): RecordToolResult {
  return {
    type: 'RecordToolResult',
    tenantId: TENANT,
    threadId: THREAD,
    at: AT,
    runId,
    step,
    callId,
    outcome: { status: 'failed', error: { code, message: 'it broke', retryable: false } },
  };
}

export function cancel(runId: string): CancelRun {
  return { type: 'CancelRun', tenantId: TENANT, threadId: THREAD, at: AT, runId, by: 'alice', reason: 'user asked' };
}

export const call = (id: string, name = 'demo.weather'): ToolCall => ({ id, name, args: { city: id } });
