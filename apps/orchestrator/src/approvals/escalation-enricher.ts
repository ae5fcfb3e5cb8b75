import { createHash } from 'node:crypto';
import type { EscalationRequestCommand } from '@ratchet/contracts';
import type { ThreadCommand } from '@ratchet/domain';
import type { AgentCatalog } from '../agents/agent-catalog';
import type { CommandEnricher } from '../threads/thread-command.handler';
import { argsDigest } from './approval-policy';

/** One escalation per uncertain effect: its id derives from the tenant and the effect's idempotency key. */
export function escalationIdFor(tenantId: string, idempotencyKey: string): string {
  return `esc_${createHash('sha256').update(`${tenantId}\u0000${idempotencyKey}`).digest('base64url').slice(0, 22)}`;
}

/**
 * When a tool result says the effect is `uncertain` (the executor could not tell whether an at-most-once
 * call acted), ask the approvals service to hold an escalation for a human: happened / retry / fail. The
 * decision goes to the executor as `tool.resolve`, whose answer reaches the thread as the call's result.
 *
 * Published (and acknowledged by JetStream) before the thread transaction commits: if it fails, the
 * transaction rolls back and the tool result is redelivered; if the commit fails after it, the redelivery
 * publishes it again under the same message id and the approvals service keeps one row per id. The fact
 * it announces is already durable in the executor's ledger, so announcing it early is never wrong.
 */
export function escalationEnricher(
  catalog: AgentCatalog,
  publish: (command: EscalationRequestCommand) => Promise<void>,
): CommandEnricher {
  return async (state, command): Promise<ThreadCommand> => {
    if (command.type !== 'RecordToolResult' || command.outcome.status !== 'uncertain') return command;
    const run = state.active;
    if (!run || run.runId !== command.runId || run.phase !== 'tools' || run.step !== command.step) return command;
    const call = run.calls.find((c) => c.callId === command.callId);
    // Only where the decider records `effect.uncertain` now (not a repeated notice for a call already escalated).
    if (!call || call.status !== 'requested') return command;
    const agent = await catalog.get(run.agent, run.agentVersion);
    const role = agent?.definition.tools.find((t) => t.name === call.tool)?.approval.role ?? 'approver';
    const approvalId = escalationIdFor(command.tenantId, command.outcome.idempotencyKey);
    await publish({
      kind: 'escalation.request',
      commandId: `escalation:${command.tenantId}:${approvalId}`,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: run.runId,
      step: run.step,
      callId: call.callId,
      approvalId,
      agent: run.agent,
      tool: call.tool,
      args: call.args,
      argsDigest: argsDigest(call.args),
      idempotencyKey: command.outcome.idempotencyKey,
      reason: command.outcome.reason,
      role,
      requestedBy: run.principal,
    });
    return command;
  };
}
