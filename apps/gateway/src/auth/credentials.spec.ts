import { presentedCredential } from './credentials';

describe('presentedCredential', () => {
  it('reads a Bearer token, case-insensitively, or x-api-key', () => {
    expect(presentedCredential({ authorization: 'Bearer rk_abc' })).toEqual({
      kind: 'api-key',
      secret: 'rk_abc',
      via: 'authorization',
    });
    expect(presentedCredential({ authorization: 'bearer rk_abc' })).toMatchObject({ secret: 'rk_abc' });
    expect(presentedCredential({ 'x-api-key': ' rk_abc ' })).toEqual({
      kind: 'api-key',
      secret: 'rk_abc',
      via: 'x-api-key',
    });
  });

  it('accepts both headers when they agree, and refuses them when they differ', () => {
    expect(presentedCredential({ authorization: 'Bearer k', 'x-api-key': 'k' })).toEqual({
      kind: 'api-key',
      secret: 'k',
      via: 'authorization',
    });
    expect(presentedCredential({ authorization: 'Bearer k', 'x-api-key': 'other' }).kind).toBe('malformed');
  });

  it('reports no credential, and malformed ones', () => {
    expect(presentedCredential({})).toEqual({ kind: 'none' });
    expect(presentedCredential({ 'x-api-key': '' })).toEqual({ kind: 'none' });
    expect(presentedCredential({ authorization: 'Basic dXNlcjpwYXNz' }).kind).toBe('malformed');
    expect(presentedCredential({ authorization: 'Bearer' }).kind).toBe('malformed');
    expect(presentedCredential({ authorization: 'Bearer a b' }).kind).toBe('malformed');
    expect(presentedCredential({ 'x-api-key': 'k'.repeat(8193) }).kind).toBe('malformed');
  });
});
