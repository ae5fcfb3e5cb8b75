import { z } from 'zod';
import type { ThreadEvent } from './thread-events';

/**
 * Feed v2 (ADR 0042): the thread's feed carries one message per committed decision — the decision's
 * events in order, with their versions — instead of one message per event. Published on
 * `<prefix>.feed.<tenant>.<thread>` (EVENTS stream), message id `decision:<id of its first event>`, so a
 * message published twice (the relay after a crash) is stored once, and a thread erased and made again
 * under the same id inside the duplicate window does not collide with its former self. A decision whose
 * message would pass the server's payload limit is split in order into parts, each a message of its own
 * (`part`), named by its own first event.
 */
export const FEED_VERSION = 2;

/** The `Ratchet-Message-Type` of a feed v2 message. */
export const FEED_DECISION_TYPE = 'feed.decision';

/**
 * An event as the feed carries it: a `ThreadEvent` (docs/schemas/ThreadEvent.schema.json) whose content may be
 * sealed (`{ enc, kid, iv, ct }` in place of a content field), so only its envelope is checked here.
 */
const FeedEvent = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  version: z.number().int().positive(),
  tenantId: z.string(),
  threadId: z.string(),
  data: z.unknown(),
});

export const FeedDecision = z
  .object({
    feed: z.literal(FEED_VERSION).describe('The feed version: a reader built for another refuses the message'),
    tenantId: z.string(),
    threadId: z.string(),
    /** The decision's id: `decision:<id of its first event>` (the same on every part of it). */
    decisionId: z.string().min(1),
    /** Where this message's events sit in the decision, when it had to be split (absent: the whole decision). */
    part: z
      .object({ index: z.number().int().nonnegative(), count: z.number().int().positive() })
      .optional()
      .describe('The part of a decision too large for one message: parts are published in order'),
    events: z
      .array(FeedEvent)
      .min(1)
      .describe('The events, in order of version, with no gap; content sealed as the log stores it'),
  })
  .refine((m) => m.events.every((e, i) => i === 0 || e.version === m.events[i - 1]!.version + 1), {
    message: 'the events must follow each other, version by version',
    path: ['events'],
  })
  .describe('FeedDecision');
export type FeedDecision = z.infer<typeof FeedDecision>;

/** A feed message of another version than this reader knows: say so, never misread it. */
export class FeedVersionError extends Error {
  constructor(
    readonly found: string,
    readonly subject?: string,
  ) {
    super(
      `feed message of version ${found} on ${subject ?? 'the feed'}: this reader reads feed v${FEED_VERSION} (${FEED_DECISION_TYPE}) on <prefix>.feed.<tenant>.<thread>; a reader of another version needs upgrading`,
    );
    this.name = 'FeedVersionError';
  }
}

/**
 * A feed v2 message's events, checked: a message of another version (or none) is a `FeedVersionError`
 * naming what was found, not a silent misread.
 */
export function feedEvents(payload: unknown, subject?: string): ThreadEvent[] {
  const version =
    typeof payload === 'object' && payload !== null && 'feed' in payload
      ? String((payload as { feed: unknown }).feed)
      : 'none (a per-event feed message?)';
  if (version !== String(FEED_VERSION)) throw new FeedVersionError(version, subject);
  return FeedDecision.parse(payload).events as unknown as ThreadEvent[];
}

/**
 * How many bytes of events (as clear JSON) one feed v2 message carries at most: half the server's default
 * payload limit (1 MiB), so a part stays under it once its content is sealed (base64 and the envelope grow
 * it by about a third).
 */
export const FEED_PART_MAX_BYTES = 512 * 1024;

/**
 * The feed v2 messages of a decision's events (in order): one, or parts split in order past `maxBytes`,
 * each `{ id: 'decision:<id of its own first event>', payload }` (an event larger than that travels alone).
 */
export function feedDecisionPayloads(
  events: readonly ThreadEvent[],
  maxBytes: number = FEED_PART_MAX_BYTES,
): { id: string; payload: FeedDecision; last: ThreadEvent }[] {
  const first = events[0];
  if (!first) return [];
  const parts = splitBySize(events, maxBytes);
  const decisionId = `decision:${first.id}`;
  return parts.map((part, index) => ({
    id: `decision:${part[0]!.id}`,
    last: part.at(-1)!,
    payload: {
      feed: FEED_VERSION,
      tenantId: first.tenantId,
      threadId: first.threadId,
      decisionId,
      ...(parts.length > 1 ? { part: { index, count: parts.length } } : {}),
      events: part as unknown as FeedDecision['events'],
    },
  }));
}

/**
 * The events in order, in parts of at most `maxBytes` of UTF-8 JSON each (an event larger than that alone).
 * On a decision's path: the common case (the whole decision well under the bound: a UTF-16 code unit is at
 * most 3 UTF-8 bytes) costs one serialization and no encoding; only a large decision is measured per event.
 */
function splitBySize(events: readonly ThreadEvent[], maxBytes: number): ThreadEvent[][] {
  if (JSON.stringify(events).length * 3 <= maxBytes) return [[...events]];
  const encoder = new TextEncoder();
  const parts: ThreadEvent[][] = [];
  let current: ThreadEvent[] = [];
  let size = 0;
  for (const e of events) {
    const bytes = encoder.encode(JSON.stringify(e)).length;
    if (current.length > 0 && size + bytes > maxBytes) {
      parts.push(current);
      current = [];
      size = 0;
    }
    current.push(e);
    size += bytes;
  }
  parts.push(current);
  return parts;
}
