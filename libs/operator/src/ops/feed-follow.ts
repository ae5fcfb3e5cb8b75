import type { NatsConnection } from 'nats';
import type { ThreadEvent } from '@ratchet/contracts';
import { CliError } from '../errors';
import { decisionEvents } from './feed-decisions';

/**
 * Delivers every event on the decision feed `subject` (`<prefix>.feed.<tenant>.<thread>`, from the start of
 * the EVENTS stream's retention, then live) to `onEvent`, one at a time and in order, until `stop` resolves.
 * An ordered consumer: no durable state left behind.
 */
export async function followFeed(
  nc: NatsConnection,
  subject: string,
  stop: Promise<void>,
  onEvent: (event: ThreadEvent) => Promise<void>,
): Promise<void> {
  const jsm = await nc.jetstreamManager();
  let stream: string;
  try {
    stream = await jsm.streams.find(subject);
  } catch (error) {
    throw new CliError(
      `no JetStream stream captures ${subject}: run \`ratchet migrate\` first`,
      undefined,
      'nats.no_stream',
      {
        cause: error,
      },
    );
  }
  // One subject as a string (an array becomes filter_subjects, which nats-server < 2.10 ignores); the
  // default start is sequence 1 (see event-feed.ts for why not deliver_policy 'all').
  const consumer = await nc.jetstream().consumers.get(stream, { filterSubjects: subject });
  const messages = await consumer.consume();
  const stopped = stop.then(() => 'stopped' as const);
  const loop = (async () => {
    for await (const m of messages) {
      let payload: unknown;
      try {
        payload = m.json();
      } catch {
        continue; // not JSON: `ratchet stream-check` reports those
      }
      for (const event of decisionEvents(payload, m.subject)) await onEvent(event);
    }
  })();
  try {
    await Promise.race([stopped, loop]);
  } finally {
    messages.stop();
    await loop.catch(() => undefined);
  }
}
