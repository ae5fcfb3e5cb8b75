import { HEADERS, type CancelRunMessage, type RunRequestInput, type Subjects } from '@ratchet/contracts';
import type { OutboxMessage, ScheduleDecision, TickDecision } from '@ratchet/domain';

/**
 * The outbox rows a decision makes: a run request on `<prefix>.requests.<tenant>` for every tick that
 * starts one (its requestId derived from schedule and tick, so the request path starts at most one
 * run for it), and a cancel on the previous run's thread inbox for `cancel-previous`. The row ids are
 * derived too: a decision made twice (it cannot commit twice, but a publish can repeat) is one message.
 */
export function tickMessages(
  tenantId: string,
  scheduleId: string,
  decision: ScheduleDecision,
  subjects: Subjects,
): OutboxMessage[] {
  const out: OutboxMessage[] = [];
  for (const tick of decision.ticks) {
    if (tick.action !== 'start') continue;
    if (tick.cancel) out.push(cancelMessage(tenantId, scheduleId, tick, tick.cancel, subjects));
    const { webhookUrl, ...rest } = tick.request;
    const request: RunRequestInput = { ...rest, ...(webhookUrl ? { webhook: { url: webhookUrl } } : {}) };
    out.push({
      id: `${tenantId}:${tick.request.requestId}`,
      subject: subjects.requests(tenantId),
      payload: request,
      headers: { [HEADERS.messageType]: 'run.request', [HEADERS.tenant]: tenantId },
    });
  }
  return out;
}

function cancelMessage(
  tenantId: string,
  scheduleId: string,
  tick: Extract<TickDecision, { action: 'start' }>,
  previous: { runId: string; threadId: string },
  subjects: Subjects,
): OutboxMessage {
  const message: CancelRunMessage = {
    kind: 'run.cancel',
    messageId: `cancel:${tenantId}:${tick.request.requestId}`,
    tenantId,
    threadId: previous.threadId,
    runId: previous.runId,
    by: `schedule:${scheduleId}`,
    reason: `the tick at ${tick.at} replaces it (overlap: cancel-previous)`,
  };
  return {
    id: message.messageId,
    subject: subjects.inbox(tenantId, previous.threadId),
    payload: message,
    headers: { [HEADERS.messageType]: 'run.cancel', [HEADERS.tenant]: tenantId },
  };
}
