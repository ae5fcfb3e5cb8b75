import type { JsMsg, NatsConnection, StreamInfo } from 'nats';
import { HEADERS, decodeThreadEvent, feedEvents, withoutSealedContent, type ThreadEvent } from '@ratchet/contracts';

/**
 * One event of a decision-feed message of the EVENTS stream as stream-check sees it (a message carries a
 * decision's events: each is an entry with the message's sequence), or a message it cannot read (no event).
 */
export interface FeedMessage {
  seq: number;
  subject: string;
  /** The Nats-Msg-Id header (`decision:<id of its first event>` when the relay published it). */
  msgId: string | undefined;
  event: ThreadEvent | undefined;
}

/**
 * Reads every retained message on `filter` (one thread's decision-feed subject, or `<prefix>.feed.>`) in
 * stream order with an ordered consumer, stopping at the last one present when reading started; each
 * message gives one entry per event it carries.
 */
export async function readStream(
  nc: NatsConnection,
  stream: string,
  filter: string,
  timeoutMs = 30_000,
): Promise<FeedMessage[]> {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  const expected = Object.values(info.state.subjects ?? {}).reduce((n, c) => n + c, 0);
  if (expected === 0) return [];
  const consumer = await nc.jetstream().consumers.get(stream, { filterSubjects: filter });
  const messages = await consumer.consume();
  const read: FeedMessage[] = [];
  const timer = setTimeout(() => messages.stop(), timeoutMs);
  try {
    for await (const m of messages) {
      read.push(...toFeedMessages(m));
      if (m.info.pending === 0) break;
    }
  } finally {
    clearTimeout(timer);
    messages.stop();
  }
  return read;
}

function toFeedMessages(m: JsMsg): FeedMessage[] {
  const base = { seq: m.seq, subject: m.subject, msgId: m.headers?.get(HEADERS.msgId) || undefined };
  let raws: ThreadEvent[];
  try {
    raws = feedEvents(m.json(), m.subject);
  } catch {
    return [{ ...base, event: undefined }]; // not a decision of feed v2: reported as unknown
  }
  return raws.map((raw) => {
    try {
      // stream-check compares ids and versions: sealed content is left sealed.
      return { ...base, event: decodeThreadEvent(withoutSealedContent(raw)) };
    } catch {
      return { ...base, event: undefined };
    }
  });
}

export async function streamInfo(nc: NatsConnection, stream: string): Promise<StreamInfo> {
  return (await nc.jetstreamManager()).streams.info(stream);
}
