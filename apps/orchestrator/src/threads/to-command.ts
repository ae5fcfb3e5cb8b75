import {
  requestDigest,
  type AgentDefinition,
  type RunLimits,
  type RunRequest,
  type ThreadInboxMessage,
  type WaitpointDecisionMessage,
} from '@ratchet/contracts';
import { redactSecrets, type RecordWaitpointDecision, type RequestRun, type ThreadCommand } from '@ratchet/domain';
import { runIdFor, threadIdFor } from '@ratchet/platform';

/** A run request becomes a decider command; ids derive from (tenant, requestId) so a resend maps to the same run. */
export function requestToCommand(
  tenantId: string,
  request: RunRequest,
  agent: { name: string; version: number; maxSteps: number; limits: RunLimits },
  at: string,
  bounds: Pick<
    RequestRun,
    'activeRunLimit' | 'waitingRunLimit' | 'overBound' | 'slots' | 'throttle' | 'debounce' | 'priority'
  > = {},
): RequestRun {
  return {
    type: 'RequestRun',
    ...bounds,
    tenantId,
    threadId: request.threadId ?? threadIdFor(tenantId, request.requestId),
    at,
    runId: runIdFor(tenantId, request.requestId),
    requestId: request.requestId,
    agent: agent.name,
    agentVersion: agent.version,
    maxSteps: agent.maxSteps,
    // Secret-looking values never reach the log: the run sees them redacted (see docs/observability.md).
    input: redactSecrets(request.input),
    principal: request.principal,
    concurrency: request.concurrency,
    replyTo: request.replyTo,
    ...(request.webhook ? { webhookUrl: request.webhook.url } : {}),
    // Metadata too: a caller's `token: …` or a key pasted into a note is not for the log either.
    metadata: redactSecrets(request.metadata),
    // Of the request as sent (before redaction): a resend must ask exactly the same.
    requestDigest: requestDigest(tenantId, request),
    limits: agent.limits,
  };
}

/** What an agent allows one run: attempts per model call, and the run's budgets (fixed on the run). */
export function runLimitsOf(agent: AgentDefinition, tenant: { queueTtlSeconds?: number } = {}): RunLimits {
  const queueTtlSeconds = tenant.queueTtlSeconds ?? agent.queueTtlSeconds;
  return {
    modelAttempts: agent.modelAttempts,
    modelCalls: agent.budget.modelCalls ?? agent.maxSteps * agent.modelAttempts,
    tokens: agent.budget.tokens,
    workingTimeSeconds: agent.runTimeoutSeconds,
    rateLimitWaitSeconds: agent.budget.rateLimitWaitSeconds,
    ...(queueTtlSeconds !== undefined ? { queueTtlSeconds } : {}),
  };
}

export function inboxToCommand(message: ThreadInboxMessage, at: string): ThreadCommand {
  const base = { tenantId: message.tenantId, threadId: message.threadId, at, runId: message.runId };
  switch (message.kind) {
    case 'model.result':
      return {
        ...base,
        type: 'RecordModelResult',
        commandId: message.commandId,
        step: message.step,
        outcome: redactSecrets(message.outcome),
        ...(message.delivery ? { delivery: message.delivery } : {}),
        ...(message.worker ? { worker: message.worker } : {}),
        ...(message.recalled ? { recalled: message.recalled } : {}),
        ...(message.context ? { context: message.context } : {}),
        ...(message.limit ? { limit: message.limit } : {}),
      };
    case 'tool.result':
      return {
        ...base,
        type: 'RecordToolResult',
        callId: message.callId,
        step: message.step,
        outcome: redactSecrets(message.outcome),
      };
    case 'run.cancel':
      return { ...base, type: 'CancelRun', by: message.by, reason: message.reason };
    case 'model.attempt':
      return {
        ...base,
        type: 'RecordModelAttempt',
        commandId: message.commandId,
        delivery: message.delivery,
        worker: message.worker,
      };
    case 'model.wait':
      return {
        ...base,
        type: 'RecordModelWait',
        commandId: message.commandId,
        step: message.step,
        limit: message.limit,
        bound: message.bound,
        until: message.until,
        ...(message.delivery ? { delivery: message.delivery } : {}),
        ...(message.worker ? { worker: message.worker } : {}),
      };
    case 'approval.decision':
      return {
        ...base,
        type: 'RecordApprovalDecision',
        callId: message.callId,
        approvalId: message.approvalId,
        decision: message.decision,
        by: message.by,
        reason: message.reason,
      };
    case 'waitpoint.decision':
      return {
        ...base,
        type: 'RecordWaitpointDecision',
        callId: message.callId,
        waitpointId: message.waitpointId,
        decision: waitpointDecisionOf(message),
        by: message.by,
      };
  }
}

/** A waitpoint's decision as the decider takes it; a completion's result is redacted like a tool's. */
function waitpointDecisionOf(message: WaitpointDecisionMessage): RecordWaitpointDecision['decision'] {
  switch (message.decision) {
    case 'completed':
      return { status: 'completed', result: redactSecrets(message.result ?? null) };
    case 'failed':
      return {
        status: 'failed',
        error: message.error ?? {
          code: 'waitpoint.failed',
          message: `waitpoint ${message.waitpointId} was failed by ${message.by}`,
          retryable: false,
        },
      };
    case 'expired':
      return { status: 'expired' };
  }
}
