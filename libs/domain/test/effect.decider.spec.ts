import { decideEffect, EffectKind } from '../src';

describe('effect decider (what a tool-call delivery may do)', () => {
  const kinds: EffectKind[] = ['pure', 'idempotent', 'at-most-once'];

  it.each(kinds)('executes a %s tool the ledger has never seen', (kind) => {
    expect(decideEffect(undefined, kind, false)).toBe('execute');
  });

  it.each(kinds)('resends the stored result of a finished %s effect instead of running it', (kind) => {
    expect(decideEffect('succeeded', kind, true)).toBe('resend');
    expect(decideEffect('failed', kind, false)).toBe('resend');
  });

  it('repeats a pure or idempotent effect whose attempt died mid-way', () => {
    expect(decideEffect('started', 'pure', false)).toBe('retry');
    expect(decideEffect('started', 'idempotent', false)).toBe('retry');
  });

  it('asks the outside world about an at-most-once effect when the tool can reconcile', () => {
    expect(decideEffect('started', 'at-most-once', true)).toBe('reconcile');
  });

  it('never blindly repeats an at-most-once effect: it escalates', () => {
    expect(decideEffect('started', 'at-most-once', false)).toBe('escalate');
    expect(decideEffect('uncertain', 'at-most-once', true)).toBe('escalate');
  });
});
