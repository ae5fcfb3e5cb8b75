import type { Failure, RunOutcome } from '@ratchet/contracts';
import { DecisionBuilder, modelCommandId, toolCommandId } from './decision.builder';
import type { Outgoing } from './thread.commands';
import { beforeModelCall, type BudgetBreach } from './run.budget';
import { heldFor } from './run.waits';
import { ActiveRun, openCalls, PendingCall, RunTicket } from './thread.state';

/** Transitions every rule of the run loop shares: start, ask the model, run a call, end. */

/** Starts the given queued run, or the oldest one, if the thread is idle. */
export function startNext(d: DecisionBuilder, runId?: string, admitted = false): void {
  if (d.state.active) return;
  const pick = (): RunTicket | undefined => (runId ? d.state.queue.find((t) => t.runId === runId) : d.state.queue[0]);
  let ticket = pick();
  // A run whose queued TTL passed does not start: it fails, and (when none was named) the next one is considered.
  while (ticket && queueExpired(ticket, d.command.at)) {
    failQueued(d, ticket);
    if (runId) return;
    ticket = pick();
  }
  // A run held for admission starts only when admitted (AdmitRun, with the tenant's count under its lock).
  if (!ticket || (ticket.held && !admitted)) return;
  d.emit({
    type: 'run.started',
    runId: ticket.runId,
    data: { requestId: ticket.requestId, maxSteps: ticket.maxSteps },
  });
  requestModel(d, ticket.runId, 1, 1);
}

export function requestModel(
  d: DecisionBuilder,
  runId: string,
  step: number,
  attempt: number,
  retryReason?: string,
  notBefore?: string,
): void {
  const commandId = modelCommandId(runId, step, attempt);
  d.emit({
    type: 'model.requested',
    runId,
    data: { step, attempt, commandId, ...(retryReason ? { retryReason } : {}), ...(notBefore ? { notBefore } : {}) },
  });
  d.send({ kind: 'model.call', runId, step, attempt, commandId, ...(notBefore ? { notBefore } : {}) });
}

/** The command that runs one call of the run's current step (its key and command id derive from it). */
export function sendToolCall(
  d: DecisionBuilder,
  run: ActiveRun,
  call: Pick<PendingCall, 'callId' | 'tool' | 'args' | 'idempotencyKey'>,
): void {
  d.send({
    kind: 'tool.call',
    runId: run.runId,
    step: run.step,
    callId: call.callId,
    tool: call.tool,
    args: call.args,
    idempotencyKey: call.idempotencyKey,
    principal: run.principal,
    commandId: toolCommandId(run.runId, run.step, call.callId),
  });
}

/** Every call of the super-step has a result: the next model call, unless the step budget is spent. */
export function nextStep(d: DecisionBuilder, run: ActiveRun): void {
  if (run.step >= run.maxSteps) {
    fail(d, run, {
      code: 'run.max_steps',
      message: `the run reached its limit of ${run.maxSteps} model calls without a final answer`,
      retryable: false,
    });
    return;
  }
  if (stopsOverBudget(d, run)) return;
  requestModel(d, run.runId, run.step + 1, 1);
}

/**
 * Before a model call: fails the run (and stops its work) when one more call would exceed a budget.
 * True when it did.
 */
export function stopsOverBudget(
  d: DecisionBuilder,
  run: ActiveRun,
  breach = beforeModelCall(run, d.command.at),
): boolean {
  if (!breach) return false;
  failOverBudget(d, run, breach);
  return true;
}

/** The run ran out of a budget: it fails naming which, and every process working for it stops. */
export function failOverBudget(
  d: DecisionBuilder,
  run: ActiveRun,
  breach: BudgetBreach,
  pending: readonly PendingCall[] = [],
): void {
  d.emit({
    type: 'run.failed',
    runId: run.runId,
    data: {
      error: breach.error,
      budget: breach.budget,
      ...(pending.length > 0 ? { pendingCalls: pending.map((c) => c.callId) } : {}),
    },
  });
  d.send(runStop(run, breach.error.message));
  ended(d, run, { requestId: run.requestId, status: 'failed', runId: run.runId, error: breach.error });
  startNext(d);
}

/**
 * What a run that stops (cancelled, interrupted, out of time) leaves open, split by what can still
 * happen to it: a call waiting for an approval never ran and never will, a call waiting for its waitpoint
 * ran and nothing will take its completion (`closed`, with a result now);
 * a call already sent may be acting or queued at the executor (`pending`): its real outcome is recorded
 * when it comes, after the run's end, and the conversation gets a placeholder result now so it stays
 * valid for the next run.
 */
export function stoppingCalls(run: ActiveRun): { closed: PendingCall[]; pending: PendingCall[] } {
  const open = run.phase === 'tools' ? openCalls(run) : [];
  return {
    closed: open.filter((c) => c.status === 'awaiting_approval' || c.status === 'awaiting_waitpoint'),
    pending: open.filter((c) => c.status === 'requested' || c.status === 'uncertain'),
  };
}

/** Closes the calls of a stopping run that never ran (see `stoppingCalls`) with an explicit result (`code`). */
export function closeCalls(
  d: DecisionBuilder,
  run: ActiveRun,
  closed: readonly PendingCall[],
  code: string,
  reason: string,
): void {
  for (const call of closed) {
    d.emit({
      type: 'tool.failed',
      runId: run.runId,
      data: {
        step: run.step,
        callId: call.callId,
        error: { code, message: `${code === 'run.cancelled' ? 'cancelled' : 'stopped'}: ${reason}`, retryable: false },
      },
    });
  }
}

/**
 * The run stopped; whether a human or the outside world was asked something for it (its approvals and
 * waitpoints must close).
 */
export function runStop(run: ActiveRun, reason: string): Extract<Outgoing, { kind: 'run.stop' }> {
  const asked = run.calls.some(
    (c) => c.approval !== undefined || c.waitpoint !== undefined || c.status === 'uncertain',
  );
  return { kind: 'run.stop', runId: run.runId, reason, ...(asked ? { humans: true as const } : {}) };
}

/** Ends the run as cancelled (see `stoppingCalls` for what happens to its open calls), then starts the next. */
export function endByCancel(d: DecisionBuilder, run: ActiveRun, by: string, reason: string, nextRunId?: string): void {
  const { closed, pending } = stoppingCalls(run);
  // Every process working for the run is told it stopped: a model call in flight is aborted, a tool call
  // not started yet is never run.
  closeCalls(d, run, closed, 'run.cancelled', reason);
  d.send(runStop(run, reason));
  d.emit({
    type: 'run.cancelled',
    runId: run.runId,
    data: {
      by,
      reason,
      closedCalls: closed.map((c) => c.callId),
      ...(pending.length > 0 ? { pendingCalls: pending.map((c) => c.callId) } : {}),
    },
  });
  ended(d, run, { requestId: run.requestId, status: 'cancelled', runId: run.runId });
  startNext(d, nextRunId);
}

export function complete(d: DecisionBuilder, run: ActiveRun, output: string): void {
  d.emit({ type: 'run.completed', runId: run.runId, data: { output, steps: run.step } });
  ended(d, run, { requestId: run.requestId, status: 'completed', runId: run.runId, output });
  startNext(d);
}

export function fail(d: DecisionBuilder, run: ActiveRun, error: Failure, pending: readonly PendingCall[] = []): void {
  d.emit({
    type: 'run.failed',
    runId: run.runId,
    data: { error, ...(pending.length > 0 ? { pendingCalls: pending.map((c) => c.callId) } : {}) },
  });
  ended(d, run, { requestId: run.requestId, status: 'failed', runId: run.runId, error });
  startNext(d);
}

/** A run ended: its requester is told (replyTo), and its webhook, if it named one. */
export function ended(
  d: DecisionBuilder,
  run: Pick<RunTicket, 'replyTo' | 'webhookUrl' | 'metadata'>,
  outcome: Omit<RunOutcome, 'tenantId' | 'threadId' | 'outcomeId'>,
): void {
  reply(d, run.replyTo, outcome);
  if (!run.webhookUrl) return;
  d.send({
    kind: 'webhook',
    url: run.webhookUrl,
    metadata: run.metadata ?? {},
    outcome: {
      outcomeId: `${outcome.runId ?? outcome.requestId}:outcome:${outcome.status}`,
      ...outcome,
      tenantId: d.command.tenantId,
      threadId: d.command.threadId,
    },
  });
}

export function reply(
  d: DecisionBuilder,
  replyTo: string | undefined,
  outcome: Omit<RunOutcome, 'tenantId' | 'threadId' | 'outcomeId'>,
  threadId: string = d.command.threadId,
): void {
  if (!replyTo) return;
  d.send({
    kind: 'reply',
    replyTo,
    outcome: {
      // The same on every copy of this outcome (it may be delivered more than once): requesters drop repeats by it.
      outcomeId: `${outcome.runId ?? outcome.requestId}:outcome:${outcome.status}`,
      ...outcome,
      tenantId: d.command.tenantId,
      threadId,
    },
  });
}

/** Whether a run that has not started is past its queued TTL at `at`. */
export function queueExpired(ticket: Pick<RunTicket, 'queuedUntil'>, at: string): boolean {
  return ticket.queuedUntil !== undefined && Date.parse(ticket.queuedUntil) <= Date.parse(at);
}

/**
 * A run that did not start within its queued TTL fails as `run.queue_expired` (retryable: asking again
 * later may find room), saying what it waited for; its requester and webhook are told like for any end.
 */
export function failQueued(d: DecisionBuilder, ticket: RunTicket): void {
  const ttl = ticket.limits?.queueTtlSeconds;
  const held = ticket.held;
  const waited = !held
    ? "the thread's earlier runs"
    : held.bound !== 'tenant.runs_limit'
      ? heldFor(held)
      : `room under ${heldFor(held)}`;
  const error: Failure = {
    code: 'run.queue_expired',
    message: `run ${ticket.runId} did not start within ${ttl} s of its request (its agent's queueTtlSeconds): it waited for ${waited}`,
    retryable: true,
  };
  d.emit({ type: 'run.failed', runId: ticket.runId, data: { error } });
  ended(d, ticket, { requestId: ticket.requestId, status: 'failed', runId: ticket.runId, error });
}
