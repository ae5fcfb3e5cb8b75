import {
  FEED_DECISION_TYPE,
  FEED_VERSION,
  HEADERS,
  type FeedDecision,
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

/**
 * How many bytes of events (as clear JSON) one feed v2 message carries at most: half the server's
 * default payload limit (1 MiB), so a part stays under it once its content is sealed (base64 and the
 * envelope grow it by about a third).
 */
export const FEED_PART_MAX_BYTES = 512 * 1024;

/**
 * Feed v2 (ADR 0042): one message per committed decision with its events in order, deduplicated by
 * `decision:<id of its first event>`. A decision over `maxBytes` is split in order into parts, each named
 * by its own first event (an event larger than that travels alone).
 */
export function feedDecisionMessages(
  subjects: Subjects,
  events: readonly ThreadEvent[],
  maxBytes: number = FEED_PART_MAX_BYTES,
): OutboxMessage[] {
  const first = events[0];
  if (!first) return [];
  const parts: ThreadEvent[][] = [];
  let current: ThreadEvent[] = [];
  let size = 0;
  for (const e of events) {
    const bytes = Buffer.byteLength(JSON.stringify(e));
    if (current.length > 0 && size + bytes > maxBytes) {
      parts.push(current);
      current = [];
      size = 0;
    }
    current.push(e);
    size += bytes;
  }
  parts.push(current);
  const decisionId = `decision:${first.id}`;
  return parts.map((part, index) => {
    const id = `decision:${part[0]!.id}`;
    const payload: FeedDecision = {
      feed: FEED_VERSION,
      tenantId: first.tenantId,
      threadId: first.threadId,
      decisionId,
      ...(parts.length > 1 ? { part: { index, count: parts.length } } : {}),
      events: part as FeedDecision['events'],
    };
    return {
      id,
      subject: subjects.feed(first.tenantId, first.threadId),
      payload,
      headers: messageHeaders(id, FEED_DECISION_TYPE, first.tenantId, part.at(-1)!.trace),
      sealAs: 'decision' as const,
    };
  });
}
