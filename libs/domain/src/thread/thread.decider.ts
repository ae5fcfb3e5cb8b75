import type { AdmissionBound, Failure, RunDebounce, RunThrottle } from '@ratchet/contracts';
import type {
  AdmitRun,
  Decision,
  ExpireQueuedRun,
  RecordToolResult,
  RequestRun,
  ThreadCommand,
} from './thread.commands';
import { DecisionBuilder } from './decision.builder';
import { DEFAULT_MODEL_ATTEMPTS } from './model-retry';
import { debounceEnds } from '../flow/run-debounce';
import { ended, endByCancel, failQueued, nextStep, queueExpired, reply, startNext } from './run.transitions';
import { recordApprovalDecision } from './thread.decider.approvals';
import { openWaitpoint, recordWaitpointDecision } from './thread.decider.waitpoints';
import { cancelRun, expireRun, recordModelAttempt, resumeRun } from './thread.decider.recovery';
import { ignored, recordSettlingResult } from './thread.decider.settling';
import { recordModelWait } from './thread.decider.limits';
import { recordModelResult } from './thread.decider.model';
import { openCalls, settlingCalls, type AdmissionHold, type RunTicket, type ThreadState } from './thread.state';

export {
  baseModelCommandId,
  idempotencyKeyOf,
  modelCommandId,
  toolCommandId,
  waitedCommandId,
} from './decision.builder';

/** How many times a model call of one step is attempted when a run's limits do not say. */
export const MAX_MODEL_ATTEMPTS = DEFAULT_MODEL_ATTEMPTS;

export { modelAttemptsOf, modelRetryDelayMs } from './model-retry';

/**
 * The thread decider: given the state (the fold of the log) and a command, the events to append and the
 * messages to send. Pure: no I/O, no clock, no random ids — they all arrive on the command.
 * A command that no longer applies (a duplicate or stale result) decides nothing.
 */
export function decide(state: ThreadState, command: ThreadCommand): Decision {
  const d = new DecisionBuilder(state, command);
  switch (command.type) {
    case 'RequestRun':
      requestRun(d, command);
      break;
    case 'RecordModelResult':
      recordModelResult(d, command);
      break;
    case 'RecordToolResult':
      recordToolResult(d, command);
      break;
    case 'RecordApprovalDecision':
      recordApprovalDecision(d, command);
      break;
    case 'RecordWaitpointDecision':
      recordWaitpointDecision(d, command);
      break;
    case 'RecordModelAttempt':
      recordModelAttempt(d, command);
      break;
    case 'RecordModelWait':
      recordModelWait(d, command);
      break;
    case 'CancelRun':
      cancelRun(d, command);
      break;
    case 'ResumeRun':
      resumeRun(d, command);
      break;
    case 'ExpireRun':
      expireRun(d, command);
      break;
    case 'AdmitRun':
      admitRun(d, command);
      break;
    case 'ExpireQueuedRun':
      expireQueuedRun(d, command);
      break;
    default: {
      const unknown: never = command;
      return unknown;
    }
  }
  const decision = d.result();
  const resumed = command.resume;
  if (resumed && state.active && decision.events.length > 0 && command.type !== 'ResumeRun') {
    decision.events.unshift({
      type: 'run.resumed',
      runId: state.active.runId,
      data: {
        fromVersion: resumed.fromVersion,
        reason: `message redelivered (delivery ${resumed.delivery}): the worker that had it stopped before committing`,
        worker: resumed.worker,
      },
    });
  }
  return decision;
}

function requestRun(d: DecisionBuilder, c: RequestRun): void {
  // Same request id, same run: one the tenant accepted before (a fact from the edge), or one still going
  // on this thread. A request id is never used for a second run: a resend that asks something else is a
  // conflict, refused with a reason; one that asks the same is answered with the run it started.
  const going =
    d.state.active?.requestId === c.requestId ? d.state.active : d.state.queue.find((t) => t.requestId === c.requestId);
  const known =
    c.known ??
    (going
      ? { runId: going.runId, threadId: c.threadId, requestDigest: going.requestDigest ?? null, outcome: null }
      : undefined);
  if (known) {
    const differs =
      known.threadId !== c.threadId ||
      (known.requestDigest !== null && c.requestDigest !== undefined && known.requestDigest !== c.requestDigest);
    if (differs) {
      refuseConflict(
        d,
        c,
        known.runId,
        known.threadId !== c.threadId ? `thread ${known.threadId}` : 'a different body',
      );
      return;
    }
    // The same request again: once its run ended, the requester is told how (the first outcome, again).
    if (known.outcome)
      reply(d, c.replyTo, { requestId: c.requestId, runId: known.runId, ...known.outcome }, known.threadId);
    return;
  }
  const bound = admissionBound(c);
  const queueOverBound = bound?.code === 'tenant.runs_limit' && c.overBound === 'queue';
  if (bound && !queueOverBound) {
    // The tenant has as many runs in flight (or waiting) as the deployment allows one tenant: refused, and
    // recorded on the thread it named, so the requester (and anyone looking at the thread) learns why; it
    // may ask again.
    const error: Failure = { ...bound, retryable: true };
    if (d.state.threadId === null) d.emit({ type: 'thread.created', data: { createdBy: c.principal.id } });
    d.emit({ type: 'run.rejected', runId: c.runId, data: { requestId: c.requestId, error } });
    reply(d, c.replyTo, { requestId: c.requestId, status: 'rejected', error, runId: c.runId });
    return;
  }
  const busy = d.state.active !== null || d.state.queue.length > 0;
  if (busy && c.concurrency === 'reject') {
    const error: Failure = {
      code: 'thread.busy',
      message: `thread ${c.threadId} has an active run (${d.state.active?.runId ?? d.state.queue[0]?.runId}); policy is reject`,
      retryable: true,
    };
    d.emit({ type: 'run.rejected', runId: c.runId, data: { requestId: c.requestId, error } });
    reply(d, c.replyTo, { requestId: c.requestId, status: 'rejected', error, runId: c.runId });
    return;
  }
  if (d.state.threadId === null) d.emit({ type: 'thread.created', data: { createdBy: c.principal.id } });
  d.emit({
    type: 'run.requested',
    runId: c.runId,
    data: {
      requestId: c.requestId,
      agent: c.agent,
      agentVersion: c.agentVersion,
      maxSteps: c.maxSteps,
      input: c.input,
      principal: c.principal,
      concurrency: c.concurrency,
      replyTo: c.replyTo,
      ...(c.webhookUrl ? { webhookUrl: c.webhookUrl } : {}),
      metadata: c.metadata,
      ...(c.requestDigest ? { requestDigest: c.requestDigest } : {}),
      ...(c.limits ? { limits: c.limits } : {}),
      ...(c.slots && c.slots.length > 0 ? { slots: c.slots } : {}),
      ...(c.throttle ? { throttle: c.throttle } : {}),
      ...(c.debounce ? { debounce: c.debounce } : {}),
      ...(c.priority ? { priority: c.priority } : {}),
    },
  });
  const active = d.state.active;
  // Past a concurrency key's max, its throttle or the tenant's bound (queue configured), or behind a run of
  // this thread that is: held for admission. A throttled run that cannot start now (its thread is busy) is
  // held too: it starts only in a decision that counted its key's starts, never when the thread hands over.
  const heldAhead = d.state.queue.find((t) => t.held !== undefined && t.runId !== c.runId);
  // A debounced run always waits its period first (a later request of its key may supersede it).
  const waitingFor =
    (c.debounce ? debounceBound(c.debounce) : undefined) ??
    noRoom(c) ??
    (heldAhead ? withoutSince(heldAhead.held!) : undefined) ??
    (c.throttle && active && c.concurrency !== 'interrupt' ? throttleBound(c.throttle) : undefined);
  if (waitingFor) {
    const behind = active?.runId ?? heldAhead?.runId;
    d.emit({
      type: 'run.queued',
      runId: c.runId,
      data: { requestId: c.requestId, ...(behind ? { behindRunId: behind } : {}), waitingFor },
    });
    return;
  }
  if (active && c.concurrency === 'interrupt') {
    // The interrupting run starts at once, ahead of runs that were already waiting.
    endByCancel(d, active, `run:${c.runId}`, `interrupted by run ${c.runId}`, c.runId);
    return;
  }
  if (d.state.active) {
    d.emit({ type: 'run.queued', runId: c.runId, data: { requestId: c.requestId, behindRunId: d.state.active.runId } });
    return;
  }
  startNext(d);
}

/**
 * A request id used again for something else (another thread, input, agent or metadata): refused, and
 * recorded on the thread it named (without a run id: it started none).
 */
function refuseConflict(d: DecisionBuilder, c: RequestRun, runId: string, what: string): void {
  const error: Failure = {
    code: 'request.conflict',
    message: `request id ${c.requestId} was already used for run ${runId} with ${what}; send a new request id for a new run`,
    retryable: false,
  };
  if (d.state.threadId === null) d.emit({ type: 'thread.created', data: { createdBy: c.principal.id } });
  d.emit({ type: 'run.rejected', data: { requestId: c.requestId, error } });
  reply(d, c.replyTo, { requestId: c.requestId, status: 'rejected', error, runId });
}

function recordToolResult(d: DecisionBuilder, c: RecordToolResult): void {
  const run = d.state.active;
  if (settlingCalls(d.state).some((s) => s.runId === c.runId && s.callId === c.callId && s.step === c.step)) {
    recordSettlingResult(d, c);
    return;
  }
  const call =
    run && run.runId === c.runId && run.phase === 'tools' && run.step === c.step
      ? run.calls.find((x) => x.callId === c.callId)
      : undefined;
  if (!run || !call || (call.status !== 'requested' && call.status !== 'uncertain')) {
    // A repeated uncertain notice for a call already escalated is the same fact again, not a new one.
    if (call?.status === 'uncertain' && c.outcome.status === 'uncertain') return;
    ignored(d, c, 'tool.result', c.callId, c.outcome.status);
    return;
  }
  const o = c.outcome;
  if (o.status === 'waiting') {
    // It ran and started something outside: the call stays open until its waitpoint is decided.
    openWaitpoint(d, run, call, o.waitpoint);
    return;
  }
  if (o.status === 'uncertain') {
    if (call.status === 'uncertain') return;
    d.emit({
      type: 'effect.uncertain',
      runId: run.runId,
      data: { step: run.step, callId: call.callId, idempotencyKey: o.idempotencyKey, reason: o.reason },
    });
    // Sent through the outbox with the event, so nobody hears of the escalation before it is recorded.
    d.send({
      kind: 'escalation.request',
      runId: run.runId,
      step: run.step,
      callId: call.callId,
      tool: call.tool,
      args: call.args,
      idempotencyKey: o.idempotencyKey,
      reason: o.reason,
      principal: run.principal,
    });
    return;
  }
  if (o.status === 'completed') {
    d.emit({
      type: 'tool.completed',
      runId: run.runId,
      data: { step: run.step, callId: call.callId, result: o.result },
    });
  } else if (o.status === 'failed') {
    d.emit({ type: 'tool.failed', runId: run.runId, data: { step: run.step, callId: call.callId, error: o.error } });
  } else {
    // The executor refused to start it (it heard the run stopped): the model learns it never ran.
    d.emit({
      type: 'tool.cancelled',
      runId: run.runId,
      data: { step: run.step, callId: call.callId, reason: o.reason },
    });
  }
  const after = d.state.active;
  if (after && openCalls(after).length === 0) nextStep(d, after);
}

/**
 * A run held for admission starts if it is the thread's next run (nothing active, first in the queue) and
 * there is room under every bound it waits for (its keys, its throttle, the tenant's) — a debounced run
 * once its period is over and no later request of its key came; otherwise nothing is decided (the pass
 * asks again later). A debounced run a later request superseded ends, wherever it waits.
 */
function admitRun(d: DecisionBuilder, c: AdmitRun): void {
  // A debounced run a later request of its key superseded ends, wherever it is in the queue.
  const ticket = d.state.queue.find((t) => t.runId === c.runId);
  const later = ticket?.debounce && c.debounce?.key === ticket.debounce.key ? c.debounceLatest : undefined;
  if (ticket && later !== undefined && later !== ticket.runId) {
    supersede(d, ticket, later);
    startNext(d);
    return;
  }
  const next = d.state.queue[0];
  if (d.state.active || next?.runId !== c.runId || !next.held) return;
  if (queueExpired(next, c.at)) {
    failQueued(d, next);
    return;
  }
  // The counts are of the keys the ask named: an ask that did not name the run's throttle (or debounce)
  // counted nothing.
  if (next.throttle && c.throttle?.key !== next.throttle.key) return;
  if (next.debounce) {
    if (c.debounce?.key !== next.debounce.key || later === undefined) return;
    if (Date.parse(c.at) < debounceEnds(next.held.since, next.debounce)) return;
  }
  if (noRoom({ ...c, slots: next.slots, throttle: next.throttle })) return;
  startNext(d, next.runId, true);
}

/** A run that has not started, past its queued TTL: it fails (`run.queue_expired`); nothing otherwise. */
function expireQueuedRun(d: DecisionBuilder, c: ExpireQueuedRun): void {
  const ticket = d.state.queue.find((t) => t.runId === c.runId);
  if (!ticket || !queueExpired(ticket, c.at)) return;
  failQueued(d, ticket);
  startNext(d);
}

/**
 * The bound a run would pass if it went in flight now: the first of its concurrency keys at its max (a key
 * is what a platform team declared for the run, so it is named first), else the tenant's bound when
 * queueing past it is configured (a request) or the admission counts it (AdmitRun).
 */
function noRoom(
  c: Pick<RequestRun, 'activeRunLimit' | 'activeRuns' | 'slots' | 'slotRuns' | 'throttle' | 'throttleStarts'> & {
    overBound?: 'refuse' | 'queue';
  },
): AdmissionBound | undefined {
  const full = c.slots?.find((s) => (c.slotRuns?.[s.key] ?? 0) >= s.max);
  if (full) return { bound: 'slot', key: full.key, limit: full.max };
  if (c.throttle && (c.throttleStarts ?? 0) >= c.throttle.limit) return throttleBound(c.throttle);
  if (c.overBound !== 'refuse' && c.activeRunLimit !== undefined && (c.activeRuns ?? 0) >= c.activeRunLimit)
    return { bound: 'tenant.runs_limit', limit: c.activeRunLimit };
  return undefined;
}

/**
 * A debounced run a later request of its key superseded (`by`, that request's run) ends before it started:
 * `run.cancelled` by `debounce`, naming the run that took its place; its requester hears it like a cancel.
 */
function supersede(d: DecisionBuilder, ticket: RunTicket, by: string): void {
  const reason = `superseded by run ${by}: a later request of debounce key ${ticket.debounce!.key} came within ${ticket.debounce!.periodSeconds} s`;
  d.emit({
    type: 'run.cancelled',
    runId: ticket.runId,
    data: { by: 'debounce', reason, closedCalls: [], supersededBy: by },
  });
  ended(d, ticket, { requestId: ticket.requestId, status: 'cancelled', runId: ticket.runId });
}

function debounceBound(b: RunDebounce): AdmissionBound {
  return { bound: 'debounce', key: b.key, periodSeconds: b.periodSeconds };
}

function throttleBound(t: RunThrottle): AdmissionBound {
  return { bound: 'throttle', key: t.key, limit: t.limit, periodSeconds: t.periodSeconds };
}

function withoutSince(held: AdmissionHold): AdmissionBound {
  const { since: _since, ...bound } = held;
  return bound;
}

/** The tenant bound a new run would pass (runs in flight, then runs waiting for a human), if any. */
function admissionBound(c: RequestRun): { code: string; message: string } | undefined {
  if (c.activeRunLimit !== undefined && (c.activeRuns ?? 0) >= c.activeRunLimit)
    return {
      code: 'tenant.runs_limit',
      message: `tenant ${c.tenantId} has ${c.activeRunLimit} runs queued or running (runs waiting for a human not counted), the most this deployment allows one tenant; ask again when some have ended`,
    };
  if (c.waitingRunLimit !== undefined && (c.waitingRuns ?? 0) >= c.waitingRunLimit)
    return {
      code: 'tenant.waiting_runs_limit',
      message: `tenant ${c.tenantId} has ${c.waitingRunLimit} runs waiting for a human (an approval, an operator), the most this deployment allows one tenant; ask again when some are decided`,
    };
  return undefined;
}
