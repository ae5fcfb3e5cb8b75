import { ledgerWrite, mayMoveLedger } from './effect.transition';

describe('effect ledger rows move only forward from the state they were read in', () => {
  it('lets the attempt that claimed a row record its outcome', () => {
    for (const to of ['succeeded', 'failed', 'uncertain', 'cancelled'] as const)
      expect(ledgerWrite({ state: 'started', attempts: 1 }, { state: 'started', attempts: 1 }, to, 'attempt')).toBe(
        'apply',
      );
  });

  it('drops a late attempt once a human answered the row', () => {
    // given: attempt 1 read `started`; meanwhile the row was escalated and a human said it happened
    // when: attempt 1 finishes and records `failed` / then: superseded, the human's answer stands
    expect(
      ledgerWrite({ state: 'started', attempts: 1 }, { state: 'succeeded', attempts: 1 }, 'failed', 'attempt'),
    ).toBe('superseded');
    expect(
      ledgerWrite({ state: 'started', attempts: 1 }, { state: 'uncertain', attempts: 1 }, 'succeeded', 'attempt'),
    ).toBe('superseded');
  });

  it('drops a late attempt once a human retry started a newer one', () => {
    expect(
      ledgerWrite({ state: 'started', attempts: 1 }, { state: 'started', attempts: 2 }, 'succeeded', 'attempt'),
    ).toBe('superseded');
  });

  it('lets a human answer an uncertain row once', () => {
    expect(
      ledgerWrite({ state: 'uncertain', attempts: 1 }, { state: 'uncertain', attempts: 1 }, 'succeeded', 'human'),
    ).toBe('apply');
    expect(ledgerWrite({ state: 'uncertain', attempts: 1 }, { state: 'started', attempts: 2 }, 'failed', 'human')).toBe(
      'superseded',
    );
  });

  it('never moves a final row, nor lets an attempt answer for a human or a human finish an attempt', () => {
    for (const from of ['succeeded', 'failed', 'cancelled'] as const)
      for (const to of ['started', 'succeeded', 'failed', 'uncertain', 'cancelled'] as const) {
        expect(mayMoveLedger(from, to, 'attempt')).toBe(false);
        expect(mayMoveLedger(from, to, 'human')).toBe(false);
      }
    expect(mayMoveLedger('uncertain', 'succeeded', 'attempt')).toBe(false);
    expect(mayMoveLedger('started', 'succeeded', 'human')).toBe(false);
    expect(mayMoveLedger('started', 'started', 'attempt')).toBe(false);
    expect(mayMoveLedger('uncertain', 'cancelled', 'human')).toBe(false);
    expect(
      ledgerWrite({ state: 'succeeded', attempts: 1 }, { state: 'succeeded', attempts: 1 }, 'failed', 'attempt'),
    ).toBe('refused');
  });
});
