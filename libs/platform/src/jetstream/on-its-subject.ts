import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import type { Subjects } from '@ratchet/contracts';
import { PoisonMessageError } from '@ratchet/domain';
import type { JetStreamContext } from './jetstream.context';

/** A message contract: a zod schema, or anything that parses like one (throws on a body it refuses). */
type Contract<T> = { parse(data: unknown): T };
/** The subject of a message's tenant (and thread), picked from the transport's subjects. */
type SubjectOf = (subjects: Subjects) => (tenantId: string, threadId: string) => string;

/**
 * The `@EventPattern` handler's message, parsed and checked before the handler runs: what every
 * JetStream controller does first. In place of `@Payload()`:
 *
 *     onCommand(@OnItsSubject(ToolCommand, (s) => s.toolCommands, 'tool') command: ToolCommand, …)
 *
 * The body is parsed with its contract, then it must have arrived on the subject its own tenant (and
 * thread) name. The tenant is the subject's (bound by NATS permissions), never only the body's: a body
 * that claims another tenant is poison (`<consumer>.subject_mismatch`, e.g. `tool.subject_mismatch`). A
 * body that does not parse fails with the contract's error, which the transport never retries. Either
 * failure reaches the transport as the handler's own would (Nest runs parameter decorators inside the
 * handler's exception filters).
 */
export function OnItsSubject<T extends { tenantId: string; threadId?: string }>(
  contract: Contract<T>,
  subjectOf: SubjectOf,
  /** Names the failure: `<consumer>.subject_mismatch`. */
  consumer: string,
): ParameterDecorator {
  return createParamDecorator((_: unknown, host: ExecutionContext) => {
    const rpc = host.switchToRpc();
    const ctx = rpc.getContext<JetStreamContext>();
    return parseOnSubject(ctx, rpc.getData(), contract, subjectOf(ctx.subjects), consumer);
  })();
}

function parseOnSubject<T extends { tenantId: string; threadId?: string }>(
  ctx: JetStreamContext,
  data: unknown,
  contract: Contract<T>,
  subjectOf: (tenantId: string, threadId: string) => string,
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

/**
 * A JetStream handler declared once: the consumer it serves (`@EventPattern(consumer)`) and its first
 * parameter, the message, parsed and checked to be on its own tenant's subject (`@OnItsSubject`):
 *
 *     @ConsumesOnItsSubject(TOOL_CONSUMER, ToolCommand, (s) => s.toolCommands, 'tool')
 *     async onCommand(command: ToolCommand, @Ctx() ctx: JetStreamContext): Promise<void> { … }
 */
export function ConsumesOnItsSubject<T extends { tenantId: string; threadId?: string }>(
  consumerName: string,
  contract: Contract<T>,
  subjectOf: SubjectOf,
  /** Names the failure: `<consumer>.subject_mismatch`. */
  consumer: string,
): MethodDecorator {
  return (target, key, descriptor) => {
    OnItsSubject(contract, subjectOf, consumer)(target, key, 0);
    EventPattern(consumerName)(target, key, descriptor);
  };
}
