import type { RequestRun } from '@ratchet/domain';

/** A run request of the `demo` agent saying "hello", as the orchestrator would build it, for `runId`. */
export function requestRunCommand(tenantId: string, threadId: string, runId: string, at: string): RequestRun {
  return {
    type: 'RequestRun',
    tenantId,
    threadId,
    at,
    runId,
    requestId: `req-${runId}`,
    agent: 'demo',
    agentVersion: 1,
    maxSteps: 5,
    input: [{ role: 'user', content: 'hello' }],
    principal: { id: 'alice', roles: ['runner'] },
    concurrency: 'enqueue',
    metadata: {},
  };
}
