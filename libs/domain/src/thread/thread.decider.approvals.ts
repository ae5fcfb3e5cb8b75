import type { Failure } from '@ratchet/contracts';
import type { RecordApprovalDecision } from './thread.commands';
import { DecisionBuilder } from './decision.builder';
import { nextStep, sendToolCall } from './run.transitions';
import { openCalls } from './thread.state';

export function recordApprovalDecision(d: DecisionBuilder, c: RecordApprovalDecision): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId || run.phase !== 'tools') return;
  const call = run.calls.find((x) => x.callId === c.callId);
  if (!call || call.status !== 'awaiting_approval' || call.approval?.approvalId !== c.approvalId) return; // decided already, or stale
  if (c.decision === 'granted') {
    d.emit({
      type: 'approval.granted',
      runId: run.runId,
      data: { approvalId: c.approvalId, callId: call.callId, by: c.by },
    });
    sendToolCall(d, run, call);
    return;
  }
  if (c.decision === 'rejected') {
    d.emit({
      type: 'approval.rejected',
      runId: run.runId,
      data: { approvalId: c.approvalId, callId: call.callId, by: c.by, reason: c.reason },
    });
  } else {
    d.emit({ type: 'approval.expired', runId: run.runId, data: { approvalId: c.approvalId, callId: call.callId } });
  }
  // A refusal goes back to the model as the tool's result.
  const error: Failure =
    c.decision === 'rejected'
      ? { code: 'approval.rejected', message: `a human rejected this call: ${c.reason}`, retryable: false }
      : {
          code: 'approval.expired',
          message: `approval ${c.approvalId} expired${call.approval?.expiresAt ? ` at ${call.approval.expiresAt}` : ''} before anyone decided: the call was not made`,
          retryable: false,
        };
  d.emit({ type: 'tool.failed', runId: run.runId, data: { step: run.step, callId: call.callId, error } });
  const after = d.state.active;
  if (after && openCalls(after).length === 0) nextStep(d, after);
}
