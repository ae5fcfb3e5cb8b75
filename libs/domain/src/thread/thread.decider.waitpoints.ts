import type { Failure, Waitpoint } from '@ratchet/contracts';
import type { RecordWaitpointDecision } from './thread.commands';
import { DecisionBuilder } from './decision.builder';
import { closeCalls, fail, nextStep, runStop, stoppingCalls } from './run.transitions';
import { ignored } from './thread.decider.settling';
import { openCalls, type ActiveRun, type PendingCall } from './thread.state';

/**
 * The rules of waitpoints (ADR 0041, docs/waitpoints.md): a tool call that started something outside
 * answers `waiting` with the waitpoint it opened; the run waits (a named wait) until the waitpoint is
 * completed, failed or expired. Recording the decision and waking the run are one decision, so a completion
 * is never marked done without the run going on; a decision for a waitpoint the call does not wait on (a
 * later wait of the same run, a decided or closed one) is recorded as ignored and changes nothing.
 */

/** The call ran and opened `waitpoint`: the run waits for it, and the approvals service keeps it. */
export function openWaitpoint(d: DecisionBuilder, run: ActiveRun, call: PendingCall, waitpoint: Waitpoint): void {
  d.emit({
    type: 'waitpoint.created',
    runId: run.runId,
    data: {
      step: run.step,
      callId: call.callId,
      waitpointId: waitpoint.id,
      expiresAt: waitpoint.expiresAt,
      onExpiry: waitpoint.onExpiry,
      ...(waitpoint.resultSchema ? { resultSchema: waitpoint.resultSchema } : {}),
    },
  });
  sendWaitpointRequest(d, run, call, waitpoint);
}

/** The approvals service is asked to keep the waitpoint (keyed by its id: a re-send opens no second one). */
export function sendWaitpointRequest(
  d: DecisionBuilder,
  run: ActiveRun,
  call: PendingCall,
  waitpoint: Waitpoint,
): void {
  d.send({
    kind: 'waitpoint.request',
    runId: run.runId,
    step: run.step,
    callId: call.callId,
    tool: call.tool,
    args: call.args,
    principal: run.principal,
    waitpoint,
  });
}

/** The waitpoint a call waits on, as the approvals service is asked to keep it. */
export function waitpointOf(call: PendingCall): Waitpoint | undefined {
  const w = call.waitpoint;
  if (!w) return undefined;
  return {
    id: w.waitpointId,
    expiresAt: w.expiresAt,
    onExpiry: w.onExpiry,
    ...(w.resultSchema ? { resultSchema: w.resultSchema } : {}),
  };
}

export function recordWaitpointDecision(d: DecisionBuilder, c: RecordWaitpointDecision): void {
  const run = d.state.active;
  const call =
    run && run.runId === c.runId && run.phase === 'tools' ? run.calls.find((x) => x.callId === c.callId) : undefined;
  if (!run || !call || call.status !== 'awaiting_waitpoint' || call.waitpoint?.waitpointId !== c.waitpointId) {
    // Decided before, closed with its run, or not this call's current wait: never taken for another wait.
    ignored(d, c, 'waitpoint.decision', c.waitpointId, c.decision.status);
    return;
  }
  const base = { step: run.step, callId: call.callId };
  const ids = { waitpointId: c.waitpointId, callId: call.callId };
  const decision = c.decision;
  switch (decision.status) {
    case 'completed':
      d.emit({ type: 'waitpoint.completed', runId: run.runId, data: { ...ids, by: c.by } });
      d.emit({ type: 'tool.completed', runId: run.runId, data: { ...base, result: decision.result } });
      break;
    case 'failed':
      d.emit({ type: 'waitpoint.failed', runId: run.runId, data: { ...ids, by: c.by } });
      d.emit({
        type: 'tool.failed',
        runId: run.runId,
        data: { ...base, error: { ...decision.error, retryable: false } },
      });
      break;
    case 'expired': {
      d.emit({ type: 'waitpoint.expired', runId: run.runId, data: ids });
      const error: Failure = {
        code: 'waitpoint.expired',
        message: `waitpoint ${c.waitpointId} expired at ${call.waitpoint.expiresAt} before it was completed`,
        retryable: false,
      };
      d.emit({ type: 'tool.failed', runId: run.runId, data: { ...base, error } });
      if (call.waitpoint.onExpiry === 'fail_run') {
        const after = d.state.active!;
        const { closed, pending } = stoppingCalls(after);
        closeCalls(d, after, closed, 'waitpoint.expired', error.message);
        d.send(runStop(run, error.message));
        fail(d, after, error, pending);
        return;
      }
      break;
    }
    default: {
      const unknown: never = decision;
      return unknown;
    }
  }
  const after = d.state.active;
  if (after && openCalls(after).length === 0) nextStep(d, after);
}
