import type { CancelRun, ExpireRun, RecordModelAttempt, ResumeRun } from './thread.commands';
import { DecisionBuilder } from './decision.builder';
import { timeBudget } from './run.budget';
import {
  closeCalls,
  endByCancel,
  ended,
  fail,
  failOverBudget,
  requestModel,
  sendToolCall,
  stoppingCalls,
  stopsOverBudget,
} from './run.transitions';
import { ActiveRun } from './thread.state';
import { modelAttemptsOf } from './model-retry';
import { sendWaitpointRequest, waitpointOf } from './thread.decider.waitpoints';

/** The rules of recovery and stopping: redeliveries, resumes, run budgets, cancellation. */

/** The same command, redelivered to a new worker: the log shows it as the next attempt of the step. */
export function recordModelAttempt(d: DecisionBuilder, c: RecordModelAttempt): void {
  const run = d.state.active;
  // A notice for a command the thread no longer waits for (answered meanwhile, or replaced) says
  // nothing new: its worker learns that when it claims the call, and any result it sends is recorded.
  if (!run || run.runId !== c.runId || run.phase !== 'model' || run.modelCall?.commandId !== c.commandId) return;
  redelivered(d, run, c.delivery, c.worker);
}

/**
 * The same command, redelivered to a new worker, is the next attempt of the step. Recorded once per
 * delivery, whether the worker's notice or its answer is applied first. Past the run's attempts the run
 * fails: a call whose every worker dies (it crashes them, or they keep being killed) stops here.
 */
export function redelivered(d: DecisionBuilder, run: ActiveRun, delivery: number, worker: string): void {
  const call = run.modelCall;
  if (!call || delivery <= (call.delivery ?? 1)) return;
  // The redelivery is another call to the provider: it must fit the run's budgets too.
  if (stopsOverBudget(d, run)) return;
  const max = modelAttemptsOf(run);
  if (call.attempt >= max) {
    outOfModelAttempts(
      d,
      run,
      'model.worker_lost',
      `step ${run.step}: the model call was attempted ${call.attempt} time${call.attempt === 1 ? '' : 's'} (the limit is ${max}); each time the worker making it stopped before answering`,
    );
    return;
  }
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

/**
 * The watchdog (or an operator) found the run with nothing alive working for it: the model call was
 * lost (no worker holds it and none took it), or tool calls got no answer. The model call becomes its
 * next attempt (bounded); tool calls are sent again under their idempotency keys (the ledger dedups).
 */
export function resumeRun(d: DecisionBuilder, c: ResumeRun): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId) return;
  if (run.phase === 'model' && run.modelCall) {
    const max = modelAttemptsOf(run);
    if (run.modelCall.attempt >= max) {
      outOfModelAttempts(
        d,
        run,
        'model.lost',
        `step ${run.step}: no model call attempt got through (${run.modelCall.attempt} of ${max}); last: ${c.reason}`.slice(
          0,
          4000,
        ),
      );
      return;
    }
    d.emit({
      type: 'run.resumed',
      runId: run.runId,
      data: { fromVersion: c.fromVersion, reason: c.reason, worker: c.worker },
    });
    const resumed = d.state.active;
    if (resumed && stopsOverBudget(d, resumed)) return;
    requestModel(d, run.runId, run.step, run.modelCall.attempt + 1, `resumed: ${c.reason}`);
    return;
  }
  d.emit({
    type: 'run.resumed',
    runId: run.runId,
    data: { fromVersion: c.fromVersion, reason: c.reason, worker: c.worker },
  });
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
  for (const call of run.calls.filter((x) => x.status === 'awaiting_waitpoint')) {
    // Keyed by the waitpoint id: a re-send never opens a second waitpoint.
    const waitpoint = waitpointOf(call);
    if (waitpoint) sendWaitpointRequest(d, run, call, waitpoint);
  }
  for (const call of run.calls.filter((x) => x.status === 'requested')) {
    sendToolCall(d, run, call);
  }
}

/** The run's model call ran out of attempts: the run fails (`code`), and work still in flight for it stops. */
function outOfModelAttempts(d: DecisionBuilder, run: ActiveRun, code: string, message: string): void {
  fail(d, run, { code, message, retryable: false });
  d.send({ kind: 'run.stop', runId: run.runId, reason: 'the model call ran out of attempts' });
}

/**
 * The run exceeded its time budget (the watchdog saw it with nothing in flight to notice): it fails
 * with `budget.exceeded`, work in flight is stopped, calls still out settle later.
 */
export function expireRun(d: DecisionBuilder, c: ExpireRun): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId) return;
  // A run with a time budget is judged by it as the log has it now (it may have begun to wait since the
  // watchdog looked); one requested without (before budgets were fixed on the run) by the watchdog's.
  const bounded = run.limits?.workingTimeSeconds !== undefined || run.limits?.wallTimeSeconds !== undefined;
  const over = timeBudget(run, c.at);
  if (bounded && !over) return;
  const { closed, pending } = stoppingCalls(run);
  closeCalls(d, run, closed, 'budget.exceeded', c.reason);
  const breach = over ?? {
    budget: 'wallTime' as const,
    error: { code: 'budget.exceeded', message: `wall-time budget: ${c.reason}`, retryable: false },
  };
  failOverBudget(d, run, breach, pending);
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
  ended(d, ticket, { requestId: ticket.requestId, status: 'cancelled', runId: ticket.runId });
}
