import {
  FEED_DECISION_TYPE,
  FEED_PART_MAX_BYTES,
  feedDecisionPayloads,
  HEADERS,
  type Subjects,
  type ThreadEvent,
  type TraceContext,
} from '@ratchet/contracts';
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

/**
 * Feed v2 (ADR 0042): one message per committed decision with its events in order, deduplicated by
 * `decision:<id of its first event>`; a decision over `maxBytes` is split in order into parts, each named
 * by its own first event (`feedDecisionPayloads`).
 */
export function feedDecisionMessages(
  subjects: Subjects,
  events: readonly ThreadEvent[],
  maxBytes: number = FEED_PART_MAX_BYTES,
): OutboxMessage[] {
  return feedDecisionPayloads(events, maxBytes).map(({ id, payload, last }) => ({
    id,
    subject: subjects.feed(payload.tenantId, payload.threadId),
    payload,
    headers: messageHeaders(id, FEED_DECISION_TYPE, payload.tenantId, last.trace),
    sealAs: 'decision' as const,
  }));
}
