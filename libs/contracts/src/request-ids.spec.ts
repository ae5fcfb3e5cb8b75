import { runIdFor, threadIdFor } from './request-ids';

describe('request-derived ids', () => {
  it('are stable for a (tenant, requestId) and differ across tenants', () => {
    expect(runIdFor('acme', 'req-1')).toBe(runIdFor('acme', 'req-1'));
    expect(runIdFor('acme', 'req-1')).not.toBe(runIdFor('other', 'req-1'));
    expect(threadIdFor('acme', 'req-1')).not.toBe(runIdFor('acme', 'req-1').replace('run_', 'th_'));
  });

  it('match the documented derivation (a fixed vector other languages can test against)', () => {
    expect(runIdFor('demo', 'order-42')).toMatch(/^run_[A-Za-z0-9_-]{22}$/);
    // Published in docs/publishing-runs.md: a publisher in any language can check its implementation.
    expect(runIdFor('demo', 'order-42')).toBe('run_lxo5ycSVsHq4qN2OTMYrEi');
  });
});
