import { diffProjections } from '../src';

describe('projection diff', () => {
  it('finds nothing between equal projections, whatever the key order', () => {
    expect(diffProjections({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toEqual([]);
  });

  it('names every differing path with both values', () => {
    expect(diffProjections({ active: { step: 2 }, queue: [] }, { active: { step: 3 }, queue: ['r2'] })).toEqual([
      'active.step: stored 2 ≠ replayed 3',
      'queue.0: stored undefined ≠ replayed "r2"',
    ]);
  });

  it('treats a missing key and an undefined one as equal (JSON drops undefined)', () => {
    expect(diffProjections({ a: undefined }, {})).toEqual([]);
  });
});
