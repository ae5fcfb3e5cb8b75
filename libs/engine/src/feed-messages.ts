import { HEADERS, type Subjects, type ThreadEvent, type TraceContext } from '@ratchet/contracts';
import type { OutboxMessage } from '@ratchet/domain';

/** The headers every outbox message carries: its id (= Nats-Msg-Id), its type, its tenant, its trace. */
export function messageHeaders(
  id: string,
  type: string,
  tenantId: string,
  trace?: TraceContext,
): Record<string, string> {
  const h: Record<string, string> = { [HEADERS.msgId]: id, [HEADERS.messageType]: type, [HEADERS.tenant]: tenantId };
  if (trace) {
    h[HEADERS.traceparent] = trace.traceparent;
    if (trace.tracestate) h[HEADERS.tracestate] = trace.tracestate;
  }
  return h;
}

/** Every committed event is also published on the thread's event feed, with the event id as message id. */
export function feedMessages(subjects: Subjects, events: readonly ThreadEvent[]): OutboxMessage[] {
  return events.map((e) => ({
    id: e.id,
    subject: subjects.events(e.tenantId, e.threadId),
    payload: e,
    headers: messageHeaders(e.id, e.type, e.tenantId, e.trace),
    sealAs: 'event' as const,
  }));
}
