import { decideEffect, EffectKind, prepareEffect } from '../src';

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

  it.each(kinds)(
    'given a %s effect another executor is acting on right now, when the call comes again, then it is left alone',
    (kind) => {
      expect(decideEffect('started', kind, true, true)).toBe('wait');
      expect(decideEffect('started', kind, false, true)).toBe('wait');
    },
  );

  it.each(kinds)('resends the cancelled outcome of a %s call whose run stopped before it started', (kind) => {
    expect(decideEffect('cancelled', kind, true)).toBe('resend');
  });
});

describe('effect preparation (what is read or written before a tool acts)', () => {
  it.each(['idempotent', 'at-most-once'] as const)(
    'given a %s tool and claims not deferred, when a call is delivered (first time or again), then `started` is claimed first',
    (kind) => {
      expect(prepareEffect(kind, 1)).toBe('claim');
      expect(prepareEffect(kind, 2)).toBe('claim');
    },
  );

  it('given deferred claims, when an idempotent call is delivered for the first time, then it acts before its `started` row', () => {
    expect(prepareEffect('idempotent', 1, true)).toBe('defer-claim');
  });

  it('given deferred claims, when an idempotent call is delivered again, then `started` is claimed first (the earlier delivery may have acted)', () => {
    expect(prepareEffect('idempotent', 2, true)).toBe('claim');
    expect(prepareEffect('idempotent', 9, true)).toBe('claim');
  });

  it('given deferred claims, an at-most-once call still claims `started` before it acts, on every delivery', () => {
    expect(prepareEffect('at-most-once', 1, true)).toBe('claim');
    expect(prepareEffect('at-most-once', 2, true)).toBe('claim');
  });

  it('given a pure tool, when a call is delivered for the first time, then it just runs (nothing read or written before)', () => {
    expect(prepareEffect('pure', 1)).toBe('run');
  });

  it('given a pure tool, when a call is delivered again, then the ledger is read first (a recorded outcome is re-sent)', () => {
    expect(prepareEffect('pure', 2)).toBe('look-up');
    expect(prepareEffect('pure', 7)).toBe('look-up');
  });

  it('given a pure call whose outcome another delivery recorded first, then that stored result is re-sent', () => {
    expect(decideEffect('succeeded', 'pure', false)).toBe('resend');
    expect(decideEffect('failed', 'pure', false)).toBe('resend');
  });
});
