import type { JsMsg, NatsConnection, StreamInfo } from 'nats';
import { HEADERS, decodeThreadEvent, withoutSealedContent, type ThreadEvent } from '@ratchet/contracts';

/** One message of the EVENTS stream as stream-check sees it. */
export interface FeedMessage {
  seq: number;
  subject: string;
  /** The Nats-Msg-Id header (the event id when the relay published it). */
  msgId: string | undefined;
  event: ThreadEvent | undefined;
}

/**
 * Reads every retained message on `filter` (one thread's subject, or `<prefix>.events.>`) in stream
 * order with an ordered consumer, stopping at the last one present when reading started.
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
      read.push(toFeedMessage(m));
      if (m.info.pending === 0) break;
    }
  } finally {
    clearTimeout(timer);
    messages.stop();
  }
  return read;
}

function toFeedMessage(m: JsMsg): FeedMessage {
  let event: ThreadEvent | undefined;
  try {
    // stream-check compares ids and versions: sealed content is left sealed.
    event = decodeThreadEvent(withoutSealedContent(m.json<{ type: string; data: unknown }>()));
  } catch {
    event = undefined;
  }
  return { seq: m.seq, subject: m.subject, msgId: m.headers?.get(HEADERS.msgId) || undefined, event };
}

export async function streamInfo(nc: NatsConnection, stream: string): Promise<StreamInfo> {
  return (await nc.jetstreamManager()).streams.info(stream);
}
