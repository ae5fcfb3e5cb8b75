import {
  decodeThreadEvent,
  feedEvents,
  FeedVersionError,
  withoutSealedContent,
  type ThreadEvent,
} from '@ratchet/contracts';
import { CliError } from '../errors';

/**
 * The events of one decision-feed message (feed v2, ADR 0042), shape only (sealed content left sealed: a
 * version is all a follower needs; what is printed comes from the log). A message of another feed version
 * stops the reader with the version error; an event this code cannot decode is left out (`ratchet
 * stream-check` reports those).
 */
export function decisionEvents(payload: unknown, subject: string): ThreadEvent[] {
  let raws: ThreadEvent[];
  try {
    raws = feedEvents(payload, subject);
  } catch (error) {
    if (error instanceof FeedVersionError)
      throw new CliError(error.message, undefined, 'feed.version', { cause: error });
    return [];
  }
  const out: ThreadEvent[] = [];
  for (const raw of raws) {
    try {
      out.push(decodeThreadEvent(withoutSealedContent(raw)));
    } catch {
      // not a thread event this code knows
    }
  }
  return out;
}
