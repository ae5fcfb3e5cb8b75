import { createHash } from 'node:crypto';
import {
  HEADERS,
  type ApprovalRequestCommand,
  type ChatMessage,
  type EscalationRequestCommand,
  type ModelCallCommand,
  type RunStopNotice,
  type Subjects,
  type ToolCallCommand,
  type TraceContext,
  type WaitpointRequestCommand,
  type WebhookDeliveryCommand,
} from '@ratchet/contracts';
import { InvariantError, type Outgoing, type OutboxMessage, type ThreadState } from '@ratchet/domain';
import { messageHeaders, type OutgoingContext, type OutgoingMapper } from '@ratchet/engine';
import { CORE_PUBLISH_HEADER } from '@ratchet/platform';
import { argsDigest, type AgentToolConfigLookup } from '@ratchet/agents';

/**
 * Each message's JSON length, measured once: a thread's messages are the same objects from one step to
 * the next (the thread cache keeps its conversation), so a step measures only the ones it added.
 */
const jsonLengths = new WeakMap<ChatMessage, number>();

/** Whether a conversation is small enough to travel in a command (counted in UTF-16 units: ≤ 2 bytes each). */
function fitsInline(transcript: readonly ChatMessage[]): boolean {
  let size = 0;
  for (const m of transcript) {
    let length = jsonLengths.get(m);
    if (length === undefined) jsonLengths.set(m, (length = JSON.stringify(m).length));
    size += length;
    if (size * 2 > INLINE_TRANSCRIPT_BYTES) return false;
  }
  return true;
}

/** One escalation per uncertain effect: its id derives from the tenant and the effect's idempotency key. */
export function escalationIdFor(tenantId: string, idempotencyKey: string): string {
  return `esc_${createHash('sha256').update(`${tenantId}\u0000${idempotencyKey}`).digest('base64url').slice(0, 22)}`;
}

/**
 * A conversation larger than this (JSON) is not carried in the model-call command: the command names how
 * many messages it has, and the worker reads them from the thread's conversation. The bus takes messages
 * of 1 MB at most, and a model call of a long thread must still go through it.
 */
export const INLINE_TRANSCRIPT_BYTES = 256 * 1024;

/**
 * The commands and replies a decision asks for, built from the state after its events. A model call
 * carries the thread's whole conversation (`transcript`: the stored messages and the decision's own),
 * which the caller loads only when the decision asks for one.
 */
export function outgoingMessages(
  subjects: Subjects,
  context: OutgoingContext,
  state: ThreadState,
  outgoing: readonly Outgoing[],
  trace?: TraceContext,
  toolConfig?: AgentToolConfigLookup,
  transcript?: readonly ChatMessage[],
): OutboxMessage[] {
  const { tenantId, threadId, version } = context;
  // Row ids (= Nats-Msg-Id) carry the thread version that caused them: a resume re-sends a command
  // under a new id, while a re-decided message (after a conflict) reproduces the same one.
  const toApprovals = (payload: ApprovalRequestCommand | WaitpointRequestCommand): OutboxMessage => {
    const id = `${payload.commandId}@${version}`;
    return {
      id,
      subject: subjects.approvalCommands(tenantId),
      payload,
      headers: messageHeaders(id, payload.kind, tenantId, trace),
    };
  };
  return outgoing.flatMap((o): OutboxMessage[] => {
    switch (o.kind) {
      case 'model.call': {
        const run = state.active;
        if (!run || run.runId !== o.runId)
          throw new InvariantError(`model call for ${o.runId}, which is not the active run`, 'outgoing.inactive_run');
        if (!transcript)
          throw new InvariantError(
            `model call for ${o.runId} without the thread's conversation`,
            'outgoing.no_transcript',
          );
        const payload: ModelCallCommand = {
          kind: 'model.call',
          commandId: o.commandId,
          tenantId,
          threadId,
          runId: o.runId,
          step: o.step,
          attempt: o.attempt,
          agent: run.agent,
          agentVersion: run.agentVersion,
          ...(fitsInline(transcript) ? { messages: [...transcript] } : { transcript: { messages: transcript.length } }),
          ...(o.notBefore ? { notBefore: o.notBefore } : {}),
        };
        // A model call's command id names its attempt, and an attempt is commanded once: the row id is the
        // command id, so the watchdog and a worker find the row of the thread's current call by it.
        const id = o.commandId;
        return [
          {
            id,
            subject: subjects.modelCommands(tenantId),
            payload,
            headers: messageHeaders(id, 'model.call', tenantId, trace),
            ...(o.notBefore ? { notBefore: o.notBefore } : {}),
          },
        ];
      }
      case 'run.stop': {
        // Durable for the tool executor (it must never start a call of the run after this), and broadcast
        // on core NATS so every process working for the run stops at once. Durable for the approvals
        // service too when a human was asked something for the run: its approvals close even if that
        // service was down when the run stopped.
        const notice: RunStopNotice = {
          kind: 'run.stop',
          messageId: `${o.runId}:stop`,
          tenantId,
          threadId,
          runId: o.runId,
          reason: o.reason.slice(0, 1000),
          at: context.at,
        };
        const durable = `${o.runId}:stop@${version}`;
        const broadcast = `${o.runId}:stop-broadcast@${version}`;
        const broadcastHeaders = messageHeaders(broadcast, 'run.stop', tenantId, trace);
        broadcastHeaders[CORE_PUBLISH_HEADER] = 'core';
        return [
          {
            id: durable,
            subject: subjects.controlCommands(tenantId),
            payload: notice,
            headers: messageHeaders(durable, 'run.stop', tenantId, trace),
          },
          { id: broadcast, subject: subjects.runStops(tenantId, threadId), payload: notice, headers: broadcastHeaders },
          ...(o.humans
            ? [
                {
                  id: `${o.runId}:stop-approvals@${version}`,
                  subject: subjects.approvalCommands(tenantId),
                  payload: notice,
                  headers: messageHeaders(`${o.runId}:stop-approvals@${version}`, 'run.stop', tenantId, trace),
                },
              ]
            : []),
        ];
      }
      case 'tool.call': {
        const payload: ToolCallCommand = {
          kind: 'tool.call',
          commandId: o.commandId,
          tenantId,
          threadId,
          runId: o.runId,
          step: o.step,
          callId: o.callId,
          tool: o.tool,
          args: o.args,
          idempotencyKey: o.idempotencyKey,
          principal: o.principal,
        };
        const run = state.active;
        const config = run && toolConfig?.(run.agent, run.agentVersion, o.tool)?.config;
        if (config) payload.toolConfig = config;
        const id = `${o.commandId}@${version}`;
        const headers = messageHeaders(id, 'tool.call', tenantId, trace);
        headers[HEADERS.idempotencyKey] = o.idempotencyKey;
        return [{ id, subject: subjects.toolCommands(tenantId), payload, headers }];
      }
      case 'approval.request': {
        const run = state.active;
        const payload: ApprovalRequestCommand = {
          kind: 'approval.request',
          commandId: `${o.runId}:approval:${o.need.approvalId}`,
          tenantId,
          threadId,
          runId: o.runId,
          step: o.step,
          callId: o.callId,
          approvalId: o.need.approvalId,
          agent: run?.agent ?? '',
          tool: o.tool,
          args: o.args,
          argsDigest: o.need.argsDigest,
          role: o.need.role,
          fourEyes: o.need.fourEyes,
          expiresAt: o.need.expiresAt,
          requestedBy: o.principal,
        };
        return [toApprovals(payload)];
      }
      case 'waitpoint.request': {
        const run = state.active;
        const payload: WaitpointRequestCommand = {
          kind: 'waitpoint.request',
          commandId: `${o.runId}:waitpoint:${o.waitpoint.id}`,
          tenantId,
          threadId,
          runId: o.runId,
          step: o.step,
          callId: o.callId,
          approvalId: o.waitpoint.id,
          agent: run?.agent ?? '',
          tool: o.tool,
          args: o.args,
          argsDigest: argsDigest(o.args),
          expiresAt: o.waitpoint.expiresAt,
          onExpiry: o.waitpoint.onExpiry,
          ...(o.waitpoint.resultSchema ? { resultSchema: o.waitpoint.resultSchema } : {}),
          requestedBy: o.principal,
        };
        return [toApprovals(payload)];
      }
      case 'escalation.request': {
        const run = state.active;
        const approvalId = escalationIdFor(tenantId, o.idempotencyKey);
        const agent = run?.runId === o.runId ? run : undefined;
        const payload: EscalationRequestCommand = {
          kind: 'escalation.request',
          commandId: `escalation:${tenantId}:${approvalId}`,
          tenantId,
          threadId,
          runId: o.runId,
          step: o.step,
          callId: o.callId,
          approvalId,
          agent: agent?.agent ?? '',
          tool: o.tool,
          args: o.args,
          argsDigest: argsDigest(o.args),
          idempotencyKey: o.idempotencyKey,
          reason: o.reason,
          role: (agent && toolConfig?.(agent.agent, agent.agentVersion, o.tool)?.approvalRole) ?? 'approver',
          requestedBy: o.principal,
        };
        // One row per escalation: the approvals service also keeps one approval per id.
        const headers = messageHeaders(payload.commandId, 'escalation.request', tenantId, trace);
        headers[HEADERS.idempotencyKey] = o.idempotencyKey;
        return [{ id: payload.commandId, subject: subjects.approvalCommands(tenantId), payload, headers }];
      }
      case 'reply': {
        // One row per outcome and request message: a resend answered with the same outcome gets its own.
        const outcomeId =
          o.outcome.outcomeId ?? `${o.outcome.runId ?? o.outcome.requestId}:outcome:${o.outcome.status}`;
        const id = `${outcomeId}@${context.causationId}`;
        const headers = messageHeaders(id, 'run.outcome', tenantId, trace);
        headers[CORE_PUBLISH_HEADER] = 'core';
        return [{ id, subject: o.replyTo, payload: o.outcome, headers }];
      }
      case 'webhook': {
        // One row per run outcome: the sender records one delivery per id, the receiver dedups on it.
        const deliveryId = `whd_${o.outcome.outcomeId ?? `${o.outcome.runId ?? o.outcome.requestId}:${o.outcome.status}`}`;
        const payload: WebhookDeliveryCommand = {
          kind: 'webhook.deliver',
          deliveryId,
          tenantId,
          url: o.url,
          outcome: o.outcome,
          metadata: o.metadata,
        };
        return [
          {
            id: deliveryId,
            subject: subjects.webhookCommands(tenantId),
            payload,
            headers: messageHeaders(deliveryId, 'webhook.deliver', tenantId, trace),
          },
        ];
      }
      default: {
        const unknown: never = o;
        return unknown;
      }
    }
  });
}

/**
 * The orchestrator's outgoing mapping for the engine: the pinned agent version's tool settings are
 * looked up only for a decision that calls a tool or escalates one.
 */
export function orchestratorOutgoing(
  subjects: Subjects,
  toolConfigs: (state: ThreadState) => Promise<AgentToolConfigLookup | undefined>,
): OutgoingMapper {
  return async ({ context, state, outgoing, trace, transcript }) =>
    outgoingMessages(
      subjects,
      context,
      state,
      outgoing,
      trace,
      outgoing.some((o) => o.kind === 'tool.call' || o.kind === 'escalation.request')
        ? await toolConfigs(state)
        : undefined,
      transcript,
    );
}
