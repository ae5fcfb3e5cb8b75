import { deliveryOf } from './model-worker.controller';

// What a model call's delivery counts as: a retry (2+) only when the model may have been asked before.
describe('the delivery a model call counts as', () => {
  it('given a first delivery of a row no worker claimed, then it is the first', () => {
    expect(deliveryOf(1, { holder: null }, false)).toBe(1);
  });

  it('given a first delivery of a row a worker claimed (a copy published again), then it is a retry', () => {
    expect(deliveryOf(1, { holder: 'orchestrator-a' }, false)).toBe(2);
  });

  it('given a later delivery of a row a worker claimed (it died in the call), then the count stands', () => {
    expect(deliveryOf(3, { holder: 'orchestrator-a' }, false)).toBe(3);
  });

  it("given a later delivery of a row no worker ever claimed (deferred by another worker's fair shares), then it is the first", () => {
    expect(deliveryOf(4, { holder: null }, false)).toBe(1);
  });

  it('given a row whose lease ran out on its holder, then the count (one more for the lease) stands', () => {
    expect(deliveryOf(2, { holder: null }, true)).toBe(2);
  });

  it('given no row (pruned long after it was sent), then the count of the bus stands', () => {
    expect(deliveryOf(2, undefined, false)).toBe(2);
    expect(deliveryOf(1, undefined, false)).toBe(1);
  });
});
