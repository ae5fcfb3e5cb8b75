import type { LedgerState } from './effect.decider';

/** A ledger row as it was read: its state and which attempt holds it. */
export interface LedgerSnapshot {
  state: LedgerState;
  attempts: number;
}

/** Who moves a row: the attempt that claimed it (a tool's outcome, an escalation) or a human's answer. */
export type LedgerWriter = 'attempt' | 'human';

/**
 * Whether `writer` may move a row from `from` to `to`. Rows only move forward:
 * - an attempt ends what it started: `started` → `succeeded` | `failed` | `uncertain` | `cancelled`;
 * - a human answers an `uncertain` row: → `succeeded` | `failed`, or back to `started` (a retry: a new
 *   attempt, with its own number);
 * - `succeeded`, `failed` and `cancelled` are final: nothing moves them, and no attempt writes over a
 *   human's answer.
 */
export function mayMoveLedger(from: LedgerState, to: LedgerState, writer: LedgerWriter): boolean {
  switch (from) {
    case 'started':
      return writer === 'attempt' && to !== 'started';
    case 'uncertain':
      return writer === 'human' && (to === 'succeeded' || to === 'failed' || to === 'started');
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return false;
    default: {
      const _exhaustive: never = from;
      return _exhaustive;
    }
  }
}

/**
 * Whether a write decided on the row as `read` applies to the row as it is `now` (compare and set): only
 * when the row is still in the state, and held by the attempt, it was read in, and the move is allowed.
 * `superseded`: the row moved on meanwhile (a human answered, another attempt took over): the late
 * write is dropped and what the row holds now stands. `refused`: the move is never allowed.
 */
export function ledgerWrite(
  read: LedgerSnapshot,
  now: LedgerSnapshot | undefined,
  to: LedgerState,
  writer: LedgerWriter,
): 'apply' | 'superseded' | 'refused' {
  if (!mayMoveLedger(read.state, to, writer)) return 'refused';
  if (!now || now.state !== read.state || now.attempts !== read.attempts) return 'superseded';
  return 'apply';
}
