import type { NewApproval } from '@ratchet/adapters';
import type { ApprovalCommand, Json } from '@ratchet/contracts';

/** The role that completes a waitpoint (the run's own kind of caller: a service or a job it started). */
export const WAITPOINT_ROLE = 'runner';

/**
 * What each command on `<prefix>.cmd.approval.<tenant>` opens: a tool approval, an escalation or a
 * waitpoint row, and what the audit keeps of it.
 */
/** The audit action of each request. */
export const REQUEST_ACTION: Record<ApprovalCommand['kind'], string> = {
  'approval.request': 'requested',
  'escalation.request': 'escalated',
  'waitpoint.request': 'waitpoint.opened',
};

/** The row a request opens: a tool approval, an escalation or a waitpoint. */
export function newApproval(command: ApprovalCommand): Omit<NewApproval, 'traceparent'> {
  const common = {
    tenantId: command.tenantId,
    id: command.approvalId,
    threadId: command.threadId,
    runId: command.runId,
    step: command.step,
    callId: command.callId,
    agent: command.agent,
    tool: command.tool,
    args: command.args,
    argsDigest: command.argsDigest,
    requestedBy: command.requestedBy.id,
    requestedByRoles: command.requestedBy.roles,
  };
  switch (command.kind) {
    case 'approval.request':
      return {
        ...common,
        kind: 'tool',
        role: command.role,
        fourEyes: command.fourEyes,
        idempotencyKey: null,
        reason: null,
        expiresAt: command.expiresAt,
      };
    case 'escalation.request':
      return {
        ...common,
        kind: 'escalation',
        role: command.role,
        fourEyes: false,
        idempotencyKey: command.idempotencyKey,
        reason: command.reason,
        expiresAt: null,
      };
    case 'waitpoint.request':
      return {
        ...common,
        kind: 'waitpoint',
        role: WAITPOINT_ROLE,
        fourEyes: false,
        idempotencyKey: null,
        reason: null,
        expiresAt: command.expiresAt,
        onExpiry: command.onExpiry,
        resultSchema: command.resultSchema ?? null,
      };
    default: {
      const unknown: never = command;
      return unknown;
    }
  }
}

/** What the audit keeps of a request besides its call. */
export function requestDetail(command: ApprovalCommand): Record<string, Json> {
  switch (command.kind) {
    case 'approval.request':
      return { role: command.role, expiresAt: command.expiresAt, fourEyes: command.fourEyes };
    case 'escalation.request':
      return { role: command.role, idempotencyKey: command.idempotencyKey, reason: command.reason };
    case 'waitpoint.request':
      return { role: WAITPOINT_ROLE, expiresAt: command.expiresAt, onExpiry: command.onExpiry };
    default: {
      const unknown: never = command;
      return unknown;
    }
  }
}
