import { PoisonMessageError } from '@ratchet/domain';
import type { JetStreamContext } from './jetstream.context';

/**
 * What every JetStream controller does first: parse the body with its contract, then check that it
 * arrived on the subject its own tenant (and thread) name. The tenant is the subject's (bound by NATS
 * permissions), never only the body's: a body that claims another tenant is poison (`code`). A body
 * that does not parse fails with the contract's error, which the transport never retries.
 */
export function parseOnSubject<T>(
  ctx: JetStreamContext,
  data: unknown,
  contract: { parse(data: unknown): T },
  subjectOf: (message: T) => string,
  code: string,
): T {
  const message = contract.parse(data);
  const expected = subjectOf(message);
  if (ctx.getSubject() !== expected) {
    throw new PoisonMessageError(`a message for ${expected} arrived on ${ctx.getSubject()}`, code);
  }
  return message;
}
