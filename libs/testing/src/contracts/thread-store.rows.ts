import type { RunRow } from '@ratchet/domain';
import type { ContractState } from './fixtures';

/** A thread's state and run rows as the ThreadStore contract's cases write them. */
export const state = (count: number, status = 'idle'): ContractState => ({
  status,
  agent: count > 0 ? 'helper' : null,
  activeRunId: status === 'running' ? 'run-1' : null,
  count,
  note: "json with ' quotes ? and \u00e9",
});

export const run = (ref: { tenantId: string; threadId: string }, patch: Partial<RunRow> = {}): RunRow => ({
  tenantId: ref.tenantId,
  runId: 'run-1',
  threadId: ref.threadId,
  requestId: 'req-1',
  agent: 'helper',
  agentVersion: 1,
  principalId: 'user-1',
  status: 'running',
  steps: 0,
  startedAt: '2026-11-30T12:00:00.000Z',
  endedAt: null,
  version: 2,
  requestDigest: 'sha256:req-1',
  outcome: null,
  ...patch,
});
