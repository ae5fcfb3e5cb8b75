import type { Failure, NewEvent, RunOutcome, ThreadEvent } from '@ratchet/contracts';
import type {
  CancelRun,
  Decision,
  ExpireRun,
  Outgoing,
  RecordApprovalDecision,
  RecordModelAttempt,
  RecordModelResult,
  RecordToolResult,
  RequestRun,
  ResumeRun,
  ThreadCommand,
} from './thread.commands';
import { evolve } from './thread.evolve';
import { ActiveRun, openCalls, PendingCall, RunTicket, ThreadState } from './thread.state';

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

export function idempotencyKeyOf(
  tenantId: string,
  threadId: string,
  runId: string,
  step: number,
  callId: string,
): string {
  return `${tenantId}:${threadId}:${runId}:${step}:${callId}`;
}

export function modelCommandId(runId: string, step: number, attempt: number): string {
  return `${runId}:model:${step}:${attempt}`;
}

export function toolCommandId(runId: string, step: number, callId: string): string {
  return `${runId}:tool:${step}:${callId}`;
}

class DecisionBuilder {
  readonly events: NewEvent[] = [];
  readonly outgoing: Outgoing[] = [];
  constructor(
    public state: ThreadState,
    readonly command: ThreadCommand,
  ) {}

  emit(event: NewEvent): void {
    this.events.push(event);
    // Evolve as we go so later rules see the effect of earlier events of the same decision.
    const provisional = {
      id: '',
      v: 1,
      tenantId: this.command.tenantId,
      threadId: this.command.threadId,
      version: 1,
      at: this.command.at,
      causationId: '',
      correlationId: '',
      ...event,
    } as ThreadEvent;
    this.state = evolve(this.state, provisional);
  }

  send(message: Outgoing): void {
    this.outgoing.push(message);
  }

  result(): Decision {
    return { events: this.events, outgoing: this.outgoing };
  }
}

function requestRun(d: DecisionBuilder, c: RequestRun): void {
  if (Object.values(d.state.runs).some((r) => r.requestId === c.requestId)) return; // same request, same run
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

/** Starts the given queued run, or the oldest one, if the thread is idle. */
function startNext(d: DecisionBuilder, runId?: string): void {
  if (d.state.active) return;
  const ticket: RunTicket | undefined = runId ? d.state.queue.find((t) => t.runId === runId) : d.state.queue[0];
  if (!ticket) return;
  d.emit({
    type: 'run.started',
    runId: ticket.runId,
    data: { requestId: ticket.requestId, maxSteps: ticket.maxSteps },
  });
  requestModel(d, ticket.runId, 1, 1);
}

function requestModel(d: DecisionBuilder, runId: string, step: number, attempt: number, retryReason?: string): void {
  const commandId = modelCommandId(runId, step, attempt);
  d.emit({
    type: 'model.requested',
    runId,
    data: { step, attempt, commandId, ...(retryReason ? { retryReason } : {}) },
  });
  d.send({ kind: 'model.call', runId, step, attempt, commandId });
}

/** The same command, redelivered to a new worker: the log shows it as the next attempt of the step. */
function recordModelAttempt(d: DecisionBuilder, c: RecordModelAttempt): void {
  const run = d.state.active;
  if (!run || run.runId !== c.runId || run.phase !== 'model' || run.modelCall?.commandId !== c.commandId) return;
  redelivered(d, run, c.delivery, c.worker);
}

/**
 * The same command, redelivered to a new worker, is the next attempt of the step. Recorded once per
 * delivery, whether the worker's notice or its answer is applied first.
 */
function redelivered(d: DecisionBuilder, run: ActiveRun, delivery: number, worker: string): void {
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

function recordApprovalDecision(d: DecisionBuilder, c: RecordApprovalDecision): void {
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
          message: 'nobody approved this call before its approval expired',
          retryable: false,
        };
  d.emit({ type: 'tool.failed', runId: run.runId, data: { step: run.step, callId: call.callId, error } });
  const after = d.state.active;
  if (after && openCalls(after).length === 0) nextStep(d, after);
}

/** The command that runs one call of the run's current step (its key and command id derive from it). */
function sendToolCall(
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
function nextStep(d: DecisionBuilder, run: ActiveRun): void {
  if (run.step >= run.maxSteps) {
    fail(d, run, {
      code: 'run.max_steps',
      message: `the run reached its limit of ${run.maxSteps} model calls without a final answer`,
      retryable: false,
    });
    return;
  }
  requestModel(d, run.runId, run.step + 1, 1);
}

function cancelRun(d: DecisionBuilder, c: CancelRun): void {
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

/** Closes every dangling call with an explicit result so the transcript stays valid for the next run. */
function endByCancel(d: DecisionBuilder, run: ActiveRun, by: string, reason: string, nextRunId?: string): void {
  const dangling = run.phase === 'tools' ? openCalls(run) : [];
  for (const call of dangling) {
    d.emit({
      type: 'tool.failed',
      runId: run.runId,
      data: {
        step: run.step,
        callId: call.callId,
        error: { code: 'run.cancelled', message: `cancelled: ${reason}`, retryable: false },
      },
    });
  }
  d.emit({ type: 'run.cancelled', runId: run.runId, data: { by, reason, closedCalls: dangling.map((c) => c.callId) } });
  reply(d, run.replyTo, { requestId: run.requestId, status: 'cancelled', runId: run.runId });
  startNext(d, nextRunId);
}

function expireRun(d: DecisionBuilder, c: ExpireRun): void {
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

function resumeRun(d: DecisionBuilder, c: ResumeRun): void {
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

function complete(d: DecisionBuilder, run: ActiveRun, output: string): void {
  d.emit({ type: 'run.completed', runId: run.runId, data: { output, steps: run.step } });
  reply(d, run.replyTo, { requestId: run.requestId, status: 'completed', runId: run.runId, output });
  startNext(d);
}

function fail(d: DecisionBuilder, run: ActiveRun, error: Failure): void {
  d.emit({ type: 'run.failed', runId: run.runId, data: { error } });
  reply(d, run.replyTo, { requestId: run.requestId, status: 'failed', runId: run.runId, error });
  startNext(d);
}

function reply(
  d: DecisionBuilder,
  replyTo: string | undefined,
  outcome: Omit<RunOutcome, 'tenantId' | 'threadId'>,
): void {
  if (!replyTo) return;
  d.send({
    kind: 'reply',
    replyTo,
    outcome: { ...outcome, tenantId: d.command.tenantId, threadId: d.command.threadId },
  });
}
