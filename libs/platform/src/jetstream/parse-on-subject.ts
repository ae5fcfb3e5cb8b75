import { PoisonMessageError } from '@ratchet/domain';
import type { JetStreamContext } from './jetstream.context';

/**
 * What every JetStream controller does first: parse the body with its contract, then check that it
 * arrived on the subject its own tenant (and thread) name. The tenant is the subject's (bound by NATS
 * permissions), never only the body's: a body that claims another tenant is poison
 * (`<consumer>.subject_mismatch`, e.g. `tool.subject_mismatch`). A body
 * that does not parse fails with the contract's error, which the transport never retries.
 */
export function parseOnSubject<T extends { tenantId: string; threadId?: string }>(
  ctx: JetStreamContext,
  data: unknown,
  contract: { parse(data: unknown): T },
  /** The subject of the message's tenant (and thread), e.g. `subjects.toolCommands`. */
  subjectOf: (tenantId: string, threadId: string) => string,
  /** Names the failure: `<consumer>.subject_mismatch`. */
  consumer: string,
): T {
  const message = contract.parse(data);
  const expected = subjectOf(message.tenantId, message.threadId ?? '');
  if (ctx.getSubject() !== expected) {
    throw new PoisonMessageError(
      `a message for ${expected} arrived on ${ctx.getSubject()}`,
      `${consumer}.subject_mismatch`,
    );
  }
  return message;
}
