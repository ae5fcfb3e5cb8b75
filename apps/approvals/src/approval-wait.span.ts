import type { ApprovalRecord } from '@ratchet/adapters';
import { ATTR, recordSpan, SPAN, toolCallAttributes } from '@ratchet/platform';

/**
 * How a wait ended: a tool approval's decision, an escalation's resolution, a waitpoint's completion, an
 * expiry, or its run stopping.
 */
export type WaitOutcome =
  'granted' | 'rejected' | 'expired' | 'happened' | 'retry' | 'fail' | 'cancelled' | 'completed' | 'failed';

/** A wait that ended in a committed transaction, reported once that transaction committed. */
export interface EndedWait {
  approval: ApprovalRecord;
  outcome: WaitOutcome;
  /** The role the decider held for it (`system` for an expiry): never who decided. */
  decidedByRole: string;
}

/**
 * `approval.wait` in the run's trace (the context its request arrived with): from the request to the
 * decision or expiry. Names the approval, tool, outcome and role; never the arguments or the people.
 */
export function recordApprovalWait(wait: EndedWait, endedAt = Date.now()): void {
  const a = wait.approval;
  // The tool's names, but this span is the wait, not the tool's execution.
  const { [ATTR.genAiOperation]: _operation, ...tool } = toolCallAttributes(a);
  recordSpan(
    SPAN.approvalWait,
    {
      ...tool,
      [ATTR.approvalId]: a.id,
      [ATTR.approvalKind]: a.kind,
      [ATTR.approvalRole]: wait.decidedByRole,
      [ATTR.outcome]: wait.outcome,
    },
    { start: Date.parse(a.requestedAt), end: endedAt },
    a.traceparent,
  );
}
