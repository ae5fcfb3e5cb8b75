import { createHash } from 'node:crypto';
import { canonicalJson } from '@ratchet/domain';
import { conflict, ProblemException } from '../problem-details';

/**
 * Idempotency-Key on the routes that create or decide something (docs/api.md#idempotency-keys), after
 * Stripe's: a key names one request of a tenant. The first request with it is answered and its answer
 * stored; the same request again gets that answer (status and body) without being done again; another
 * request with it (another route, body, parameters or sender) is refused with 409 `request.conflict`.
 * While the first is still being answered, a second one gets 409 `request.in_progress` with Retry-After.
 * Pure: the store's row in, the decision out.
 */

/** What the gateway asks of a key: the operation (`POST /v1/runs/:runId/cancel`) and the request's fingerprint. */
export interface KeyRequest {
  operation: string;
  fingerprint: string;
}

/** A key's row as stored, when it was not free to take. */
export interface StoredKey extends KeyRequest {
  /** The answer given; absent while the first request is being answered. */
  answer?: { status: number; body: unknown } | undefined;
  /** Until when the first request holds the key (ISO time). */
  lockedUntil?: string | undefined;
}

export type KeyDecision =
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'conflict'; operation: string }
  | { kind: 'in_progress'; retryAfterSeconds: number };

/** How long the first request holds its key: a gateway that dies while answering frees it after this. */
export const KEY_HOLD_SECONDS = 60;

/** The decision on a key another request took first (the store takes a free or expired one itself). */
export function decideOnTakenKey(stored: StoredKey, asked: KeyRequest, now: number): KeyDecision {
  if (stored.operation !== asked.operation || stored.fingerprint !== asked.fingerprint)
    return { kind: 'conflict', operation: stored.operation };
  if (stored.answer) return { kind: 'replay', status: stored.answer.status, body: stored.answer.body };
  const until = stored.lockedUntil === undefined ? now : Date.parse(stored.lockedUntil);
  return { kind: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)) };
}

/**
 * A request's fingerprint: who sent it, the operation, its path parameters, query and body, as
 * canonical JSON (key order does not matter) hashed. The sender is part of it, so one principal's key
 * never answers another's request.
 */
export function requestFingerprint(request: {
  principalId: string;
  operation: string;
  params: unknown;
  query: unknown;
  body: unknown;
}): string {
  const text = canonicalJson({
    principal: request.principalId,
    operation: request.operation,
    params: request.params ?? {},
    query: request.query ?? {},
    body: request.body ?? null,
  });
  return `sha256:${createHash('sha256').update(text).digest('base64url')}`;
}

/** The problem a key decision that is not a replay answers with. */
export function keyProblem(key: string, decision: Exclude<KeyDecision, { kind: 'replay' }>): ProblemException {
  switch (decision.kind) {
    case 'conflict':
      return conflict(
        `The Idempotency-Key ${key} was already used for another request (${decision.operation}, with another body, parameters or sender); send a new key for a new request.`,
        { code: 'request.conflict', idempotencyKey: key, operation: decision.operation },
      );
    case 'in_progress': {
      const problem = conflict(
        `A request with the Idempotency-Key ${key} is still being answered; retry after ${decision.retryAfterSeconds} s with the same key to get its answer.`,
        { code: 'request.in_progress', idempotencyKey: key },
      );
      return new ProblemException(problem.problem, { 'Retry-After': String(decision.retryAfterSeconds) });
    }
    default: {
      const _exhaustive: never = decision;
      throw new Error(`unknown key decision ${JSON.stringify(_exhaustive)}`);
    }
  }
}

/** The thread and run an answer names (`threadId`, `runId` at its top level), so erasure finds its key. */
export function answerSubjects(body: unknown): { threadId?: string; runId?: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const b = body as Record<string, unknown>;
  return {
    ...(typeof b['threadId'] === 'string' ? { threadId: b['threadId'] } : {}),
    ...(typeof b['runId'] === 'string' ? { runId: b['runId'] } : {}),
  };
}
