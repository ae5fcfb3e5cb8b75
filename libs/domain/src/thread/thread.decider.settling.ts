import type { IgnoredKind } from '@ratchet/contracts';
import type { z } from 'zod';
import type { RecordToolResult, ThreadCommand } from './thread.commands';
import { DecisionBuilder } from './decision.builder';
import { settlingCalls } from './thread.state';

/**
 * What comes after a run's end: the real outcomes of calls that were still out when it stopped, and
 * results for things the thread no longer waits for. Neither is dropped without a trace in the log.
 */

/**
 * The real outcome of a call of an ended run: recorded after the run's end, so the thread, the effect
 * ledger and the outside world agree. An uncertain effect is escalated to a human as for a live run.
 */
export function recordSettlingResult(d: DecisionBuilder, c: RecordToolResult): void {
  const call = settlingCalls(d.state).find((s) => s.runId === c.runId && s.callId === c.callId);
  if (!call) return;
  const o = c.outcome;
  const base = { step: call.step, callId: call.callId };
  switch (o.status) {
    case 'completed':
      d.emit({ type: 'tool.completed', runId: call.runId, data: { ...base, result: o.result } });
      return;
    case 'failed':
      d.emit({ type: 'tool.failed', runId: call.runId, data: { ...base, error: o.error } });
      return;
    case 'cancelled':
      d.emit({ type: 'tool.cancelled', runId: call.runId, data: { ...base, reason: o.reason } });
      return;
    case 'waiting':
      // It ran after its run ended and opened a wait nothing will take: no waitpoint is kept for it.
      d.emit({
        type: 'tool.failed',
        runId: call.runId,
        data: {
          ...base,
          error: {
            code: 'waitpoint.closed',
            message: `the call opened waitpoint ${o.waitpoint.id} after its run had ended: nothing waits for its completion`,
            retryable: false,
          },
        },
      });
      return;
    case 'uncertain':
      if (call.status === 'uncertain') return; // the same notice again
      d.emit({
        type: 'effect.uncertain',
        runId: call.runId,
        data: { ...base, idempotencyKey: o.idempotencyKey, reason: o.reason },
      });
      d.send({
        kind: 'escalation.request',
        runId: call.runId,
        step: call.step,
        callId: call.callId,
        tool: call.tool,
        args: call.args,
        idempotencyKey: o.idempotencyKey,
        reason: o.reason,
        principal: call.principal,
      });
      return;
    default: {
      const unknown: never = o;
      return unknown;
    }
  }
}

/**
 * A result for something the thread no longer waits for (a replaced model attempt, a call of a run that
 * ended long ago, a stray message): recorded as such, with what it carried (never its content).
 */
export function ignored(
  d: DecisionBuilder,
  c: ThreadCommand & { runId: string },
  kind: z.infer<typeof IgnoredKind>,
  ref: string,
  outcome?: string,
): void {
  // No thread to record it on (never created, or erased): nothing is created for a stray result.
  if (d.state.threadId === null) return;
  const run = d.state.active;
  const reason =
    run?.runId === c.runId
      ? kind === 'model.result' || kind === 'model.wait'
        ? `the run no longer waits for ${ref} (it is at step ${run.step}, ${run.phase === 'model' ? `attempt ${run.modelCall?.attempt ?? 0}` : 'tool calls'})`
        : `the run no longer waits for call ${ref} (it is at step ${run.step})`
      : d.state.queue.some((t) => t.runId === c.runId)
        ? 'the run has not started'
        : 'the run is not active (it ended, or never ran on this thread)';
  d.emit({ type: 'result.ignored', runId: c.runId, data: { kind, ref, reason, ...(outcome ? { outcome } : {}) } });
}
