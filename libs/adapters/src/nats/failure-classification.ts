import { RatchetError, retryOf, type Retry } from '@ratchet/domain';

/**
 * SQLSTATE classes a new try cannot fix: `22` data exception (a NUL in text, an invalid escape, a
 * value out of range), `54` program limit exceeded (a row or an index entry too large, a statement
 * too complex), and the not-null / check violations. Retrying one only holds a consumer slot.
 */
const DETERMINISTIC_SQLSTATE = /^(22[0-9A-Z]{3}|54[0-9A-Z]{3}|23502|23514)$/;

/**
 * Failures that say a dependency is away, not that the message is bad: Node socket errors, Postgres
 * connection / resource / operator-intervention classes (08, 53, 57, 58), serialization and deadlock
 * (40), lock not available, and the pool's and NATS's own timeouts. They keep the consumer's full
 * redelivery budget (`max_deliver`): a database restart must not poison the work that waits for it.
 */
const INFRASTRUCTURE_SQLSTATE = /^(08|53|57|58|40)[0-9A-Z]{3}$|^55P03$/;
const INFRASTRUCTURE_CODE = /^(E[A-Z]+|CONNECTION_[A-Z_]+|TIMEOUT|503|CONNECTION_REFUSED|DISCONNECT)$/;
const INFRASTRUCTURE_NAME = /Timeout|Connection|NatsError|AbortError/i;
const INFRASTRUCTURE_MESSAGE = /connection|terminat|timeout|timed out|ECONN|socket|pool|shutting down|unavailable/i;

/** The chain of `cause`s of an error, itself first (bounded: causes can be cyclic). */
function causes(error: unknown): unknown[] {
  const out: unknown[] = [];
  let e: unknown = error;
  while (e !== null && e !== undefined && out.length < 6 && !out.includes(e)) {
    out.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

function codesOf(e: unknown): string[] {
  if (typeof e !== 'object' || e === null) return [];
  const o = e as { code?: unknown; sqlState?: unknown; errno?: unknown };
  return [o.code, o.sqlState, o.errno].filter((c): c is string => typeof c === 'string');
}

/** A database error no retry can fix (see DETERMINISTIC_SQLSTATE), anywhere in the cause chain. */
export function isDeterministicDatabaseError(error: unknown): boolean {
  return causes(error).some((e) => codesOf(e).some((c) => DETERMINISTIC_SQLSTATE.test(c)));
}

/** A failure of a dependency (see INFRASTRUCTURE_*), anywhere in the cause chain. */
export function isInfrastructureError(error: unknown): boolean {
  return causes(error).some((e) => {
    if (codesOf(e).some((c) => INFRASTRUCTURE_SQLSTATE.test(c) || INFRASTRUCTURE_CODE.test(c))) return true;
    if (!(e instanceof Error)) return false;
    return INFRASTRUCTURE_NAME.test(e.name) || INFRASTRUCTURE_MESSAGE.test(e.message);
  });
}

/** A zod failure or JSON syntax error: the message will never parse, retrying is pointless. */
export function isParseFailure(error: unknown): boolean {
  if (error instanceof SyntaxError) return true;
  const e = error as { name?: unknown; issues?: unknown } | null | undefined;
  return !!e && (e.name === 'ZodError' || e.name === '$ZodError') && Array.isArray(e.issues);
}

/** Deliveries an error of no known kind gets before the message is given up on (~25 s of backoff). */
export const DEFAULT_MAX_UNTYPED_DELIVERIES = 8;

/**
 * What to do with a message whose handler failed with `error` on delivery `deliveryCount`:
 * parse failures and deterministic database errors are terminal at once; a typed error says itself;
 * an untyped error that is not a dependency's failure (a bug, or a rule nobody named) gets a small
 * number of deliveries, not the consumer's whole budget, so it cannot hold a slot for minutes.
 */
export function retryDecision(
  error: unknown,
  deliveryCount = 1,
  maxUntypedDeliveries = DEFAULT_MAX_UNTYPED_DELIVERIES,
): Retry {
  if (isParseFailure(error) || isDeterministicDatabaseError(error)) return 'never';
  if (error instanceof RatchetError) return error.retry;
  if (isInfrastructureError(error)) return retryOf(error);
  return deliveryCount >= maxUntypedDeliveries ? 'never' : retryOf(error);
}
