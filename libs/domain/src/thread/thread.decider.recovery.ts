import type { CancelRun, ExpireRun, RecordModelAttempt, ResumeRun } from './thread.commands';
import { DecisionBuilder } from './decision.builder';
import { endByCancel, fail, reply, requestModel, sendToolCall } from './run.transitions';
import { ActiveRun, openCalls } from './thread.state';

/** The rules of recovery and stopping: redeliveries, resumes, run budgets, cancellation. */

/** The same command, redelivered to a new worker: the log shows it as the next attempt of the step. */
export function recordModelAttempt(d: DecisionBuilder, c: RecordModelAttempt): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId || run.phase !== 'model' || run.modelCall?.commandId !== c.commandId) return;
  redelivered(d, run, c.delivery, c.worker);
}

/**
 * The same command, redelivered to a new worker, is the next attempt of the step. Recorded once per
 * delivery, whether the worker's notice or its answer is applied first.
 */
export function redelivered(d: DecisionBuilder, run: ActiveRun, delivery: number, worker: string): void {
  const call = run.modelCall;
  if (!call || delivery <= (call.delivery ?? 1)) return;
  d.emit({
    type: 'model.requested',
    runId: run.runId,
    data: {
      step: run.step,
      attempt: call.attempt + 1,
      commandId: call.commandId,
      delivery,
      retryReason: `redelivered (delivery ${delivery}) to ${worker}: an earlier model worker stopped before answering`,
    },
  });
}

export function resumeRun(d: DecisionBuilder, c: ResumeRun): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId) return;
  d.emit({
    type: 'run.resumed',
    runId: run.runId,
    data: { fromVersion: c.fromVersion, reason: c.reason, worker: c.worker },
  });
  if (run.phase === 'model' && run.modelCall) {
    requestModel(d, run.runId, run.step, run.modelCall.attempt + 1, `resumed: ${c.reason}`);
    return;
  }
  for (const call of run.calls.filter((x) => x.status === 'awaiting_approval')) {
    // The approvals service keys requests by approval id: a re-send never opens a second approval.
    const need = call.approval;
    if (need)
      d.send({
        kind: 'approval.request',
        runId: run.runId,
        step: run.step,
        callId: call.callId,
        tool: call.tool,
        args: call.args,
        principal: run.principal,
        need,
      });
  }
  for (const call of run.calls.filter((x) => x.status === 'requested')) {
    sendToolCall(d, run, call);
  }
}

export function expireRun(d: DecisionBuilder, c: ExpireRun): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId) return;
  for (const call of run.phase === 'tools' ? openCalls(run) : []) {
    d.emit({
      type: 'tool.failed',
      runId: run.runId,
      data: {
        step: run.step,
        callId: call.callId,
        error: { code: 'run.timeout', message: c.reason, retryable: false },
      },
    });
  }
  fail(d, run, { code: 'run.timeout', message: c.reason, retryable: false });
}

export function cancelRun(d: DecisionBuilder, c: CancelRun): void {
  const run = d.state.active;
  if (run && run.runId === c.runId) {
    endByCancel(d, run, c.by, c.reason);
    return;
  }
  const ticket = d.state.queue.find((t) => t.runId === c.runId);
  if (!ticket) return;
  d.emit({ type: 'run.cancelled', runId: ticket.runId, data: { by: c.by, reason: c.reason, closedCalls: [] } });
  reply(d, ticket.replyTo, { requestId: ticket.requestId, status: 'cancelled', runId: ticket.runId });
}
