import type { Failure } from '@ratchet/contracts';
import type { Decision, RecordModelResult, RecordToolResult, RequestRun, ThreadCommand } from './thread.commands';
import { DecisionBuilder, idempotencyKeyOf } from './decision.builder';
import { complete, endByCancel, fail, nextStep, reply, requestModel, sendToolCall, startNext } from './run.transitions';
import { recordApprovalDecision } from './thread.decider.approvals';
import { cancelRun, expireRun, recordModelAttempt, redelivered, resumeRun } from './thread.decider.recovery';
import { openCalls, ThreadState } from './thread.state';

export { idempotencyKeyOf, modelCommandId, toolCommandId } from './decision.builder';

/** How many times a model call is attempted when the provider reports a retryable failure. */
export const MAX_MODEL_ATTEMPTS = 3;

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
    case 'RecordModelAttempt':
      recordModelAttempt(d, command);
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
  // Same request, same run: one the thread accepted before (a fact from the edge), or one still going.
  if (
    c.knownRequest ||
    d.state.active?.requestId === c.requestId ||
    d.state.queue.some((t) => t.requestId === c.requestId)
  )
    return;
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
      metadata: c.metadata,
    },
  });
  const active = d.state.active;
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

function recordModelResult(d: DecisionBuilder, c: RecordModelResult): void {
  const found = d.state.active;
  if (!found || found.runId !== c.runId || found.phase !== 'model' || found.modelCall?.commandId !== c.commandId)
    return;
  if (c.delivery && c.delivery > 1) redelivered(d, found, c.delivery, c.worker ?? 'unknown');
  const run = d.state.active ?? found;
  if (!run.modelCall) return;
  const o = c.outcome;
  if (o.status === 'error') {
    if (o.error.retryable && run.modelCall.attempt < MAX_MODEL_ATTEMPTS) {
      requestModel(
        d,
        run.runId,
        run.step,
        run.modelCall.attempt + 1,
        `provider error ${o.error.code}: ${o.error.message}`.slice(0, 500),
      );
    } else {
      fail(d, run, { ...o.error, code: `model.${o.error.code}` });
    }
    return;
  }
  d.emit({
    type: 'model.responded',
    runId: run.runId,
    data: {
      step: run.step,
      commandId: c.commandId,
      content: o.content,
      toolCalls: o.toolCalls,
      usage: o.usage,
      model: o.model,
      ...(c.recalled ? { recalled: c.recalled } : {}),
    },
  });
  if (o.toolCalls.length === 0) {
    complete(d, run, o.content ?? '');
    return;
  }
  const ids = new Set<string>();
  for (const call of o.toolCalls) {
    if (ids.has(call.id)) {
      fail(d, run, {
        code: 'model.duplicate_call_id',
        message: `the model used tool-call id ${call.id} twice`,
        retryable: false,
      });
      return;
    }
    ids.add(call.id);
  }
  for (const call of o.toolCalls) {
    const idempotencyKey = idempotencyKeyOf(c.tenantId, c.threadId, run.runId, run.step, call.id);
    d.emit({
      type: 'tool.requested',
      runId: run.runId,
      data: { step: run.step, callId: call.id, tool: call.name, args: call.args, idempotencyKey },
    });
    const need = c.approvals?.[call.id];
    if (need) {
      // The call waits, durably, for a human; its siblings go ahead.
      d.emit({
        type: 'approval.requested',
        runId: run.runId,
        data: {
          step: run.step,
          callId: call.id,
          approvalId: need.approvalId,
          tool: call.name,
          argsDigest: need.argsDigest,
          role: need.role,
          expiresAt: need.expiresAt,
          fourEyes: need.fourEyes,
        },
      });
      d.send({
        kind: 'approval.request',
        runId: run.runId,
        step: run.step,
        callId: call.id,
        tool: call.name,
        args: call.args,
        principal: run.principal,
        need,
      });
      continue;
    }
    sendToolCall(d, run, { callId: call.id, tool: call.name, args: call.args, idempotencyKey });
  }
}

function recordToolResult(d: DecisionBuilder, c: RecordToolResult): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId || run.phase !== 'tools' || run.step !== c.step) return;
  const call = run.calls.find((x) => x.callId === c.callId);
  if (!call || (call.status !== 'requested' && call.status !== 'uncertain')) return;
  const o = c.outcome;
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
  } else {
    d.emit({ type: 'tool.failed', runId: run.runId, data: { step: run.step, callId: call.callId, error: o.error } });
  }
  const after = d.state.active;
  if (after && openCalls(after).length === 0) nextStep(d, after);
}
