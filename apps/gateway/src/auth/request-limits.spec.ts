import { RequestLimits } from './request-limits';

describe('RequestLimits', () => {
  const limits = (over: Partial<ConstructorParameters<typeof RequestLimits>[0]> = {}, now = () => 0) =>
    new RequestLimits({ perPrincipal: 2, perTenant: 3, authFailuresPerSource: 2, ...over }, now);

  it('gives each principal of each tenant its own bucket: the same subject in two tenants does not share one', () => {
    const l = limits({ perTenant: 0 });
    expect([l.authenticated('acme', 'sub-1').ok, l.authenticated('acme', 'sub-1').ok]).toEqual([true, true]);
    expect(l.authenticated('acme', 'sub-1')).toEqual({ ok: false, scope: 'principal', retryAfterSeconds: 30 });
    expect(l.authenticated('globex', 'sub-1').ok).toBe(true);
  });

  it("limits a tenant's principals together, and leaves other tenants alone", () => {
    const l = limits();
    expect(['a', 'b', 'c'].map((p) => l.authenticated('acme', p).ok)).toEqual([true, true, true]);
    expect(l.authenticated('acme', 'd')).toMatchObject({ ok: false, scope: 'tenant' });
    expect(l.authenticated('globex', 'a').ok).toBe(true);
  });

  it('makes a source that keeps failing authentication wait, whatever it presents next, until its bucket refills', () => {
    let now = 0;
    const l = limits({}, () => now);
    expect(l.beforeAuthentication('10.0.0.9').ok).toBe(true);
    l.authenticationFailed('10.0.0.9');
    l.authenticationFailed('10.0.0.9');
    expect(l.beforeAuthentication('10.0.0.9')).toEqual({ ok: false, scope: 'source', retryAfterSeconds: 30 });
    expect(l.beforeAuthentication('10.0.0.10').ok).toBe(true);
    now += 30_000;
    expect(l.beforeAuthentication('10.0.0.9').ok).toBe(true);
  });
});
