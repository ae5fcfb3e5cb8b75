import type { Json } from '@ratchet/contracts';
import { canonicalJson } from '../thread/canonical-json';

/**
 * The rules of completing a waitpoint (ADR 0041) as plain functions: a waitpoint is an approval of kind
 * `waitpoint`, decided once — by its completion (`completed` with a result, `failed` with an error) or by
 * its TTL (`expired`), or closed with its run (`cancelled`). The service reads the row (locked), asks
 * this, and writes what it says; time comes in as `now`, and whether a result fits the waitpoint's schema
 * comes in as `problems` (the schema check is the edge's).
 */

/** What the rules need of a stored waitpoint. */
export interface WaitpointFacts {
  kind: 'tool' | 'escalation' | 'waitpoint';
  status: 'pending' | 'granted' | 'rejected' | 'expired' | 'resolved' | 'cancelled' | 'completed' | 'failed';
  expiresAt: string | null;
  decision: { decision: string; by: string; reason: string; result: Json | null } | null;
}

/** What a completion asks for: a result, or an error the outside world reports. */
export type WaitpointCompletion =
  { outcome: 'completed'; result: Json } | { outcome: 'failed'; error: { code: string; message: string } };

/** Why a completion is refused; the HTTP answer and the CLI name it. */
export type WaitpointRefusal =
  /** Not a waitpoint (an approval or an escalation is decided, not completed). */
  | 'waitpoint.not_a_waitpoint'
  /** The completer lacks the waitpoint's role. */
  | 'waitpoint.forbidden'
  /** Already completed or failed with another body. */
  | 'waitpoint.conflict'
  /** Its TTL passed before the completion came. */
  | 'waitpoint.expired'
  /** Its run stopped before it was completed. */
  | 'waitpoint.closed'
  /** The result does not fit the schema the tool declared. */
  | 'waitpoint.invalid_result';

export type CompletionOutcome =
  /** Record it: one decision, and the message that wakes the run, in one transaction. */
  | { kind: 'complete'; decision: 'completed' | 'failed'; result: Json }
  /** The same completion again: answered as the first one was, nothing recorded, no second continuation. */
  | { kind: 'replay' }
  /** Past its TTL and not yet swept: it expires now (as the sweeper would), and the completion is refused. */
  | { kind: 'expire'; refusal: 'waitpoint.expired'; message: string }
  | { kind: 'refused'; refusal: WaitpointRefusal; message: string };

/** What a completion stores as the decision's result: the result itself, or the error reported. */
export function storedResult(completion: WaitpointCompletion): Json {
  return completion.outcome === 'completed' ? completion.result : completion.error;
}

export function completeWaitpoint(
  waitpoint: WaitpointFacts,
  completion: WaitpointCompletion,
  problems: readonly string[],
  now: Date,
): CompletionOutcome {
  if (waitpoint.kind !== 'waitpoint')
    return refused(
      'waitpoint.not_a_waitpoint',
      `this is an approval of kind ${waitpoint.kind}: it is decided, not completed`,
    );
  switch (waitpoint.status) {
    case 'completed':
    case 'failed': {
      const first = waitpoint.decision;
      if (first && first.decision === completion.outcome && same(first.result, storedResult(completion)))
        return { kind: 'replay' };
      return refused(
        'waitpoint.conflict',
        `this waitpoint was already ${waitpoint.status}${first ? ` by ${first.by}` : ''}, with another ${
          waitpoint.status === 'completed' ? 'result' : 'error'
        }`,
      );
    }
    case 'expired':
      return refused('waitpoint.expired', `this waitpoint expired at ${waitpoint.expiresAt ?? 'its deadline'}`);
    case 'cancelled':
      return refused(
        'waitpoint.closed',
        `this waitpoint was closed: ${waitpoint.decision?.reason ?? 'its run stopped before it was completed'}`,
      );
    case 'pending':
      break;
    case 'granted':
    case 'rejected':
    case 'resolved':
      return refused('waitpoint.not_a_waitpoint', `this waitpoint holds an approval's status (${waitpoint.status})`);
    default: {
      const unknown: never = waitpoint.status;
      return unknown;
    }
  }
  if (waitpoint.expiresAt !== null && Date.parse(waitpoint.expiresAt) <= now.getTime())
    return {
      kind: 'expire',
      refusal: 'waitpoint.expired',
      message: `this waitpoint expired at ${waitpoint.expiresAt}`,
    };
  if (completion.outcome === 'completed' && problems.length > 0)
    return refused(
      'waitpoint.invalid_result',
      `the result does not fit the waitpoint's schema: ${problems.join('; ')}`,
    );
  return { kind: 'complete', decision: completion.outcome, result: storedResult(completion) };
}

function same(a: Json | null, b: Json): boolean {
  return a !== null && canonicalJson(a) === canonicalJson(b);
}

function refused(refusal: WaitpointRefusal, message: string): CompletionOutcome {
  return { kind: 'refused', refusal, message };
}
