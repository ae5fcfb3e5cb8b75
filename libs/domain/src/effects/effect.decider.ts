/** How safe a tool is to repeat after a crash (see ARCHITECTURE §6). */
export type EffectKind = 'pure' | 'idempotent' | 'at-most-once';
export type LedgerState = 'started' | 'succeeded' | 'failed' | 'uncertain';

/**
 * What the executor does with a tool-call delivery, given what the effect ledger already says:
 * - `execute`: nothing recorded; record `started` (committed) and run the tool.
 * - `resend`: the outcome is recorded; send the stored result again, do not run (a dedup hit).
 * - `retry`: a previous attempt died mid-effect, and repeating is safe (pure) or deduped outside
 *   (idempotent: the same key goes out again).
 * - `reconcile`: a previous attempt died mid-effect; ask the outside world whether it happened.
 * - `escalate`: it may have happened and nobody can tell: mark `uncertain`, tell the thread, ask a human.
 *   Never a blind resend.
 */
export type EffectAction = 'execute' | 'resend' | 'retry' | 'reconcile' | 'escalate';

export function decideEffect(ledger: LedgerState | undefined, kind: EffectKind, hasReconcile: boolean): EffectAction {
  switch (ledger) {
    case undefined:
      return 'execute';
    case 'succeeded':
    case 'failed':
      return 'resend';
    case 'uncertain':
      // Already escalated: the human's answer (through approvals) settles it, never a redelivery.
      return 'escalate';
    case 'started':
      if (kind === 'pure' || kind === 'idempotent') return 'retry';
      return hasReconcile ? 'reconcile' : 'escalate';
  }
}
