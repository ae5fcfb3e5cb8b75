/**
 * The small named set of errors the core raises. `retry` says what a handler should do with the
 * message that caused it: `now` (reload and decide again), `later` (nak with backoff) or `never`
 * (terminal: term the message and record the failure).
 */
export type Retry = 'now' | 'later' | 'never';

export abstract class RatchetError extends Error {
  abstract readonly code: string;
  abstract readonly retry: Retry;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Another writer moved the thread first: reload it and decide again. */
export class ConcurrencyError extends RatchetError {
  readonly code = 'concurrency.conflict';
  readonly retry = 'now';
  constructor(
    readonly threadId: string,
    readonly expectedVersion: number,
    options?: { cause?: unknown },
  ) {
    super(`thread ${threadId} moved past version ${expectedVersion}`, options);
  }
}

/** A dependency (database, bus, provider) is unavailable for now. */
export class TransientError extends RatchetError {
  readonly code: string;
  readonly retry = 'later';
  /** When it is known: how long until a new try can succeed (the message is redelivered after it). */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, code = 'transient', options?: { cause?: unknown; retryAfterMs?: number }) {
    super(message, options);
    this.code = code;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** The message can never be processed (malformed, refers to nothing): term it and record why. */
export class PoisonMessageError extends RatchetError {
  readonly code: string;
  readonly retry = 'never';
  constructor(message: string, code = 'message.poison', options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Something the code itself guarantees did not hold (a bug, or stored data changed behind its back):
 * the same message would fail the same way on every delivery, so, like any poison message, it is
 * termed and recorded, never retried. `code` names the guarantee.
 */
export class InvariantError extends PoisonMessageError {
  constructor(message: string, code = 'invariant.violated', options?: { cause?: unknown }) {
    super(message, code, options);
  }
}

export function retryOf(error: unknown): Retry {
  return error instanceof RatchetError ? error.retry : 'later';
}
