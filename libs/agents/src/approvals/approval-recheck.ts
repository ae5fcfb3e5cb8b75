import type { Principal } from '@ratchet/contracts';
import type { RecordApprovalDecision, ThreadCommand } from '@ratchet/domain';
import type { CommandEnricher } from '@ratchet/engine';
import { argsDigest } from './approval-policy';
import { toolPermission } from './tool-permission';

/** The role a run's principal must still hold for its approved calls to run. */
export const RUNNER_ROLE = 'runner';

/** Who records a rejection the re-check turned a grant into. */
export const RECHECK_ACTOR = 'system:recheck';

export interface PrincipalStanding {
  status: 'valid' | 'invalid' | 'unmanaged';
  reason?: string | undefined;
  /** The roles the principal holds now, when the gateway keeps them (API keys). */
  roles?: string[] | undefined;
}

export interface PrincipalQuery {
  tenantId: string;
  principalId: string;
  roles: string[];
  runStartedAt?: string | undefined;
}

export interface RecheckPorts {
  /**
   * The gateway's answer: does the principal still exist, unrevoked, with these roles, for a run started
   * then (a JWT subject revoked since answers invalid, ADR 0035)? Throws when nobody answers.
   */
  checkPrincipal(request: PrincipalQuery): Promise<PrincipalStanding>;
  /** The roles the pinned agent version's entry for the tool allows (undefined: any). */
  toolRoles(tenantId: string, agent: string, agentVersion: number, tool: string): Promise<string[] | undefined>;
  /** The approvals service's answer: is this approval good for this call and these arguments (marks it used)? */
  verify(request: {
    tenantId: string;
    approvalId: string;
    runId: string;
    callId: string;
    argsDigest: string;
  }): Promise<{ valid: boolean; reason?: string | undefined }>;
}

/**
 * architecture §7: an old approval is not proof of authority. When a granted decision is applied — i.e.
 * right before the call is sent to the executor — check again that the approval has not expired, that the
 * arguments are the ones approved, that the run's principal still holds `runner` and a role the tool's
 * agent entry allows (when it names roles: from the gateway for API keys, else as recorded on the run), and that the approvals
 * service still vouches for the approval (and marks it used by this call). Any failure turns the grant
 * into a rejection naming why; the model receives it as the tool's result. Nobody answering is not a
 * failure of authority: the error makes the message wait and come back (nak with backoff).
 */
export function approvalRecheckEnricher(ports: RecheckPorts): CommandEnricher {
  return async (state, command): Promise<ThreadCommand> => {
    if (command.type !== 'RecordApprovalDecision' || command.decision !== 'granted') return command;
    const run = state.active;
    if (!run || run.runId !== command.runId || run.phase !== 'tools') return command;
    const call = run.calls.find((c) => c.callId === command.callId);
    const approval = call?.approval;
    // Stale or already decided: the decider ignores it, so there is nothing to check (and nothing to mark used).
    if (!call || !approval || call.status !== 'awaiting_approval' || approval.approvalId !== command.approvalId)
      return command;

    const refuse = (reason: string): RecordApprovalDecision => ({
      ...command,
      decision: 'rejected',
      by: RECHECK_ACTOR,
      reason: `${reason} (granted by ${command.by})`,
    });
    if (Date.parse(command.at) >= Date.parse(approval.expiresAt))
      return refuse(`approval.expired: the approval expired at ${approval.expiresAt}, before the call could run`);
    const digest = argsDigest(call.args);
    if (digest !== approval.argsDigest)
      return refuse('approval.args_mismatch: the arguments differ from the ones approved');
    if (approval.fourEyes && command.by === run.principal.id)
      return refuse('approval.four_eyes: the principal that started the run approved its own call');

    const standing = await ports.checkPrincipal({
      tenantId: command.tenantId,
      principalId: run.principal.id,
      roles: [RUNNER_ROLE],
      runStartedAt: run.startedAt,
    });
    if (standing.status === 'invalid')
      return refuse(
        `approval.revoked: the requester no longer holds ${RUNNER_ROLE}${standing.reason ? ` (${standing.reason})` : ''}`,
      );
    if (standing.status === 'unmanaged' && !holds(run.principal, RUNNER_ROLE))
      return refuse(`approval.revoked: the requester does not hold ${RUNNER_ROLE}`);
    const toolRoles = await ports.toolRoles(command.tenantId, run.agent, run.agentVersion, call.tool);
    const held = standing.status === 'valid' && standing.roles ? standing.roles : run.principal.roles;
    const permission = toolPermission(call.tool, toolRoles, held);
    if (!permission.allowed) return refuse(`approval.tool_forbidden: ${permission.reason}`);

    const verdict = await ports.verify({
      tenantId: command.tenantId,
      approvalId: command.approvalId,
      runId: command.runId,
      callId: command.callId,
      argsDigest: digest,
    });
    if (!verdict.valid) return refuse(verdict.reason ?? 'approval.refused: the approvals service refused it');
    return command;
  };
}

function holds(principal: Principal, role: string): boolean {
  return principal.roles.includes(role);
}
