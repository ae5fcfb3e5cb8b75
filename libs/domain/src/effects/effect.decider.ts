/** How safe a tool is to repeat after a crash (see architecture §6). */
export type EffectKind = 'pure' | 'idempotent' | 'at-most-once';
export type LedgerState = 'started' | 'succeeded' | 'failed' | 'uncertain' | 'cancelled';

/**
 * What the executor reads or writes before a tool acts, given the tool's kind and the delivery count:
 * - `claim`: `started` is committed before the tool acts, so a redelivery after a crash knows the effect
 *   may have happened (the claim returns the existing row): at-most-once calls, and idempotent calls
 *   delivered again (or on their first delivery when claims are not deferred).
 * - `defer-claim`: an idempotent call on its first delivery: it acts at once and its `started` row is
 *   written only if it is still acting `claimAfterMs` later (while it acts, off the call's path). A call
 *   that ends sooner records its outcome and result message in one statement, like a pure call. A crash
 *   before the row is written leaves nothing: the redelivery claims and runs the call again with the same
 *   idempotency key, which the outside world deduplicates (what an idempotent tool promises).
 * - `look-up`: a pure call delivered again (its earlier delivery may have recorded an outcome): read the
 *   ledger first, so a recorded outcome is re-sent and the tool not run. Nothing is written before it runs.
 * - `run`: a pure call on its first delivery: nothing is read or written before the tool runs; its
 *   outcome and result message are recorded together afterwards, and an outcome already there (the same
 *   call sent again in a new message) wins and is re-sent. A pure tool may repeat, so a crash
 *   mid-call needs no record: the redelivery runs it again.
 */
export type EffectPreparation = 'claim' | 'defer-claim' | 'look-up' | 'run';

/** `deferIdempotentClaims`: whether an idempotent call's first delivery acts before its `started` row (ADR 0043). */
export function prepareEffect(
  kind: EffectKind,
  deliveryCount: number,
  deferIdempotentClaims = false,
): EffectPreparation {
  switch (kind) {
    case 'pure':
      return deliveryCount > 1 ? 'look-up' : 'run';
    case 'idempotent':
      return deferIdempotentClaims && deliveryCount <= 1 ? 'defer-claim' : 'claim';
    case 'at-most-once':
      return 'claim';
    default: {
      const unknown: never = kind;
      return unknown;
    }
  }
}

/**
 * What the executor does with a tool-call delivery, given what the effect ledger already says:
 * - `execute`: nothing recorded; run the tool (after committing `started`, unless it is pure).
 * - `resend`: the outcome is recorded (`cancelled` too: the run stopped before the call started); send
 *   the stored result again, do not run (a dedup hit).
 * - `wait`: `started`, and another executor holds it right now (its lease runs): it is acting, and will
 *   report. This delivery (a re-sent command) does nothing: no retry, no escalation of a call in progress.
 * - `retry`: a previous attempt died mid-effect, and repeating is safe (pure) or deduped outside
 *   (idempotent: the same key goes out again).
 * - `reconcile`: a previous attempt died mid-effect; ask the outside world whether it happened.
 * - `escalate`: it may have happened and nobody can tell: mark `uncertain`, tell the thread, ask a human.
 *   Never a blind resend.
 */
export type EffectAction = 'execute' | 'resend' | 'wait' | 'retry' | 'reconcile' | 'escalate';

export function decideEffect(
  ledger: LedgerState | undefined,
  kind: EffectKind,
  hasReconcile: boolean,
  heldElsewhere = false,
): EffectAction {
  switch (ledger) {
    case undefined:
      return 'execute';
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return 'resend';
    case 'uncertain':
      // Already escalated: the human's answer (through approvals) settles it, never a redelivery.
      return 'escalate';
    case 'started':
      if (heldElsewhere) return 'wait';
      if (kind === 'pure' || kind === 'idempotent') return 'retry';
      return hasReconcile ? 'reconcile' : 'escalate';
    default: {
      const unknown: never = ledger;
      return unknown;
    }
  }
}
