import { openCalls, type ThreadCommand, type ThreadState } from '@ratchet/domain';

export interface RunCandidate {
  tenantId: string;
  threadId: string;
  version: number;
  runId: string;
  startedAt: string | null;
  updatedAt: string;
  state: ThreadState;
}

export interface RunLimits {
  stepTimeoutMs: number;
  runTimeoutMs: number;
}

/**
 * What the watchdog does with a run that made no progress for a while (pure, so it is tested without
 * a clock): past its run budget it fails; past its step budget it is nudged (pending commands sent
 * again — the model call as a new attempt, tool calls under the same idempotency key, which the effect
 * ledger dedups). A run that only waits for a human (approval, uncertain effect) is left alone.
 */
export function watchdogCommand(
  run: RunCandidate,
  limits: RunLimits,
  now: Date,
  worker: string,
): ThreadCommand | undefined {
  const active = run.state.active;
  if (!active || active.runId !== run.runId) return undefined;
  const base = { tenantId: run.tenantId, threadId: run.threadId, at: now.toISOString(), runId: run.runId };
  if (run.startedAt && now.getTime() - Date.parse(run.startedAt) > limits.runTimeoutMs) {
    return {
      ...base,
      type: 'ExpireRun',
      reason: `the run exceeded its time budget of ${Math.round(limits.runTimeoutMs / 1000)} s`,
    };
  }
  const idleMs = now.getTime() - Date.parse(run.updatedAt);
  if (idleMs <= limits.stepTimeoutMs) return undefined;
  if (active.phase === 'tools') {
    const open = openCalls(active);
    if (open.length > 0 && open.every((c) => c.status === 'awaiting_approval' || c.status === 'uncertain'))
      return undefined;
  }
  return {
    ...base,
    type: 'ResumeRun',
    reason: `watchdog: no progress for ${Math.round(idleMs / 1000)} s (step budget ${Math.round(limits.stepTimeoutMs / 1000)} s)`,
    worker,
    fromVersion: run.version,
  };
}
