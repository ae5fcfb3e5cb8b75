import { ESCALATION_CHOICES, TOOL_APPROVAL_CHOICES, type ApprovalChoice } from '@ratchet/contracts';

/**
 * The approvals rules (architecture §7) as plain functions: who may see and decide an approval, what a
 * decision records, and whether a granted approval still authorises the one call it was given for. The
 * service reads the row (locked), asks these, and writes what they say; time comes in as `now`.
 */

/** What the rules need of a stored approval. */
export interface ApprovalFacts {
  kind: 'tool' | 'escalation' | 'waitpoint';
  status: 'pending' | 'granted' | 'rejected' | 'expired' | 'resolved' | 'cancelled' | 'completed' | 'failed';
  role: string;
  fourEyes: boolean;
  requestedBy: string;
  expiresAt: string | null;
  runId: string;
  callId: string;
  argsDigest: string;
  decision: { by: string; reason?: string } | null;
}

export interface Decider {
  id: string;
  roles: readonly string[];
}

/** Admins and viewers see every approval of the tenant; an approver sees those its roles may decide. */
export function seesAll(principal: Decider): boolean {
  return principal.roles.some((r) => r === 'admin' || r === 'viewer');
}

export function maySee(principal: Decider, approval: Pick<ApprovalFacts, 'role'>): boolean {
  return seesAll(principal) || principal.roles.includes(approval.role);
}

/** The choices of an approval still open (none once it is decided; none for a waitpoint: it is completed). */
export function choicesOf(approval: Pick<ApprovalFacts, 'kind' | 'status'>): ApprovalChoice[] {
  if (approval.status !== 'pending') return [];
  switch (approval.kind) {
    case 'tool':
      return [...TOOL_APPROVAL_CHOICES];
    case 'escalation':
      return [...ESCALATION_CHOICES];
    case 'waitpoint':
      return [];
    default: {
      const unknown: never = approval.kind;
      return unknown;
    }
  }
}

export type RecordedDecision = 'granted' | 'rejected' | 'happened' | 'retry' | 'fail';

export type DecisionOutcome =
  /** Refused: recorded in the audit, nothing else changes. */
  | { kind: 'refused'; code: 'invalid' | 'forbidden' | 'conflict'; message: string }
  /** Past its deadline: the approval expires now (as the sweeper would) and the decision is refused. */
  | { kind: 'expired'; message: string }
  | { kind: 'decided'; decision: RecordedDecision; status: 'granted' | 'rejected' | 'resolved' };

/**
 * A human's decision on an approval of their tenant: accepted only from a principal holding its role,
 * with four-eyes not from the run's own principal, once, and before it expires.
 */
export function decideApproval(
  approval: ApprovalFacts,
  choice: ApprovalChoice,
  by: Decider,
  now: Date,
): DecisionOutcome {
  if (approval.kind === 'waitpoint')
    return refused(
      'invalid',
      'a waitpoint is completed by the outside world (POST /v1/waitpoints/{id}/complete), not decided',
    );
  const choices: readonly string[] = approval.kind === 'tool' ? TOOL_APPROVAL_CHOICES : ESCALATION_CHOICES;
  if (!choices.includes(choice))
    return refused('invalid', `a ${approval.kind} approval is decided with one of: ${choices.join(', ')}`);
  if (!by.roles.includes(approval.role))
    return refused('forbidden', `deciding this approval needs the role ${approval.role}`);
  if (approval.fourEyes && by.id === approval.requestedBy)
    return refused('forbidden', 'four-eyes: the principal that started the run may not decide its own call');
  if (approval.status === 'cancelled')
    return refused(
      'conflict',
      `this approval was cancelled: ${approval.decision?.reason ?? 'its run stopped before anyone decided it'}`,
    );
  if (approval.status !== 'pending')
    return refused(
      'conflict',
      `this approval was already decided: ${approval.status}${approval.decision ? ` by ${approval.decision.by}` : ''}`,
    );
  if (expired(approval, now)) return { kind: 'expired', message: `this approval expired at ${approval.expiresAt}` };
  return { kind: 'decided', ...recorded(choice) };
}

/** What a choice records: a tool approval is granted or rejected; an escalation is resolved. */
function recorded(choice: ApprovalChoice): { decision: RecordedDecision; status: 'granted' | 'rejected' | 'resolved' } {
  switch (choice) {
    case 'approve':
      return { decision: 'granted', status: 'granted' };
    case 'reject':
      return { decision: 'rejected', status: 'rejected' };
    case 'happened':
    case 'retry':
    case 'fail':
      return { decision: choice, status: 'resolved' };
    default: {
      const unknown: never = choice;
      return unknown;
    }
  }
}

export interface UseRequest {
  runId: string;
  callId: string;
  argsDigest: string;
}

/**
 * The orchestrator, about to run a granted call: does this approval authorise exactly this call with
 * these arguments now? (Single use is the store's: the service marks it used by the call after this.)
 */
export function verifyUse(
  approval: ApprovalFacts,
  use: UseRequest,
  now: Date,
): { valid: true } | { valid: false; reason: string } {
  const no = (reason: string) => ({ valid: false as const, reason });
  if (approval.kind !== 'tool') return no('approval.kind: an escalation authorises no call');
  if (approval.runId !== use.runId || approval.callId !== use.callId)
    return no('approval.mismatch: the approval was given for another call');
  if (approval.status !== 'granted' || !approval.decision)
    return no(`approval.not_granted: the approval is ${approval.status}`);
  if (approval.fourEyes && approval.decision.by === approval.requestedBy)
    return no('approval.four_eyes: the approval was given by the principal that started the run');
  if (expired(approval, now))
    return no(`approval.expired: the approval expired at ${approval.expiresAt}, before the call could run`);
  if (approval.argsDigest !== use.argsDigest)
    return no('approval.args_mismatch: the arguments differ from the ones approved');
  return { valid: true };
}

function expired(approval: Pick<ApprovalFacts, 'expiresAt'>, now: Date): boolean {
  return approval.expiresAt !== null && Date.parse(approval.expiresAt) <= now.getTime();
}

function refused(code: 'invalid' | 'forbidden' | 'conflict', message: string): DecisionOutcome {
  return { kind: 'refused', code, message };
}
