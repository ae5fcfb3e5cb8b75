import type { ToolCall } from '@ratchet/contracts';
import type { RecordModelResult } from './thread.commands';
import { idempotencyKeyOf, type DecisionBuilder } from './decision.builder';
import { modelAttemptsOf, later, modelRetryDelayMs } from './model-retry';
import { afterSpending, tenantCapBreach } from './run.budget';
import {
  complete,
  fail,
  failOverBudget,
  nextStep,
  requestModel,
  sendToolCall,
  stopsOverBudget,
} from './run.transitions';
import { redelivered } from './thread.decider.recovery';
import { ignored } from './thread.decider.settling';
import { waitsOutRateLimit } from './thread.decider.limits';
import { openCalls } from './thread.state';

/** The model's answer (or its failure) for the run's current call: the rules of the model phase of a step. */
export function recordModelResult(d: DecisionBuilder, c: RecordModelResult): void {
  const found = d.state.active;
  if (!found || found.runId !== c.runId || found.phase !== 'model' || found.modelCall?.commandId !== c.commandId) {
    ignored(d, c, 'model.result', c.commandId, c.outcome.status === 'ok' ? 'ok' : `error:${c.outcome.error.code}`);
    return;
  }
  if (c.delivery && c.delivery > 1) redelivered(d, found, c.delivery, c.worker ?? 'unknown');
  const run = d.state.active;
  if (!run?.modelCall) return; // the redelivery used the last attempt: the run failed
  const o = c.outcome;
  if (o.status === 'error') {
    // Refused by the tenant's token cap before it was made: the run stops over the tenant's budget.
    const capped = tenantCapBreach(o.error);
    if (capped) {
      failOverBudget(d, run, capped);
      return;
    }
    // A 429 is waited out, not retried as an attempt, while the run's rate-limit wait budget lasts.
    if (waitsOutRateLimit(d, run, c, o.error)) return;
    const attempt = run.modelCall.attempt;
    const max = modelAttemptsOf(run);
    if (o.error.retryable && attempt < max) {
      if (stopsOverBudget(d, run)) return;
      const wait = modelRetryDelayMs(attempt, o.error.retryAfterMs, c.commandId);
      requestModel(
        d,
        run.runId,
        run.step,
        attempt + 1,
        `attempt ${attempt} failed: ${o.error.code}: ${o.error.message}`.slice(0, 500),
        later(c.at, wait),
      );
    } else {
      const { retryAfterMs: _wait, ...error } = o.error;
      fail(d, run, {
        ...error,
        code: `model.${o.error.code}`.slice(0, 64),
        message: (o.error.retryable
          ? `step ${run.step}: the model call failed ${attempt} time${attempt === 1 ? '' : 's'} (the limit is ${max} attempts); last error: ${o.error.message}`
          : `step ${run.step}, attempt ${attempt}: ${o.error.message}`
        ).slice(0, 4000),
        retryable: false,
      });
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
      ...(c.context ? { context: c.context } : {}),
    },
  });
  if (o.toolCalls.length === 0) {
    complete(d, run, o.content ?? '');
    return;
  }
  // The answer is recorded (it was made and paid for); past a budget none of its calls is sent, and each
  // is closed as such, so the conversation stays valid for the thread's next run.
  const spent = d.state.active;
  const over = spent && afterSpending(spent, c.at);
  if (spent && over) {
    for (const call of o.toolCalls) {
      requestTool(d, c, spent, call);
      d.emit({
        type: 'tool.failed',
        runId: spent.runId,
        data: {
          step: spent.step,
          callId: call.id,
          error: { ...over.error, message: `not sent: ${over.error.message}` },
        },
      });
    }
    const closed = d.state.active;
    if (closed) failOverBudget(d, closed, over);
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
    const idempotencyKey = requestTool(d, c, run, call);
    const refusal = c.refusals?.[call.id];
    if (refusal) {
      // Never sent: the model learns why, as the tool's result.
      d.emit({ type: 'tool.failed', runId: run.runId, data: { step: run.step, callId: call.id, error: refusal } });
      continue;
    }
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
  // Every call refused: nothing will answer, so the model is asked again with the refusals.
  const after = d.state.active;
  if (after && after.runId === run.runId && openCalls(after).length === 0) nextStep(d, after);
}

/** Records the model's call as requested at the run's step; its idempotency key is where it stands. */
function requestTool(
  d: DecisionBuilder,
  at: { tenantId: string; threadId: string },
  run: { runId: string; step: number },
  call: ToolCall,
): string {
  const idempotencyKey = idempotencyKeyOf(at.tenantId, at.threadId, run.runId, run.step, call.id);
  d.emit({
    type: 'tool.requested',
    runId: run.runId,
    data: { step: run.step, callId: call.id, tool: call.name, args: call.args, idempotencyKey },
  });
  return idempotencyKey;
}
