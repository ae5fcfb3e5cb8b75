import { principalRevocation, tokenRevocation, type RevocationEntry } from './jwt-revocation.rule';

const entry = (over: Partial<RevocationEntry> = {}): RevocationEntry => ({
  id: 'r1',
  subject: 'alice',
  jti: null,
  issuedBefore: null,
  createdAt: '2026-12-02T12:00:00.000Z',
  ...over,
});

describe('tokenRevocation', () => {
  it('given no entry for the subject, when a token is presented, then it stands', () => {
    expect(tokenRevocation([], { subject: 'alice' })).toEqual({ revoked: false });
    expect(tokenRevocation([entry({ subject: 'bob' })], { subject: 'alice' })).toEqual({ revoked: false });
  });

  it('given an entry for the whole subject, then every token of that subject is revoked', () => {
    const verdict = tokenRevocation([entry()], { subject: 'alice', issuedAt: '2027-01-01T00:00:00Z', jti: 'x' });
    expect(verdict).toEqual({ revoked: true, entryId: 'r1', reason: 'the JWT subject alice was revoked by entry r1' });
  });

  it('given an entry for one jti, then only that token is revoked', () => {
    const entries = [entry({ jti: 't-1' })];
    expect(tokenRevocation(entries, { subject: 'alice', jti: 't-1' }).revoked).toBe(true);
    expect(tokenRevocation(entries, { subject: 'alice', jti: 't-2' }).revoked).toBe(false);
    expect(tokenRevocation(entries, { subject: 'alice' }).revoked).toBe(false);
  });

  it('given "issued before T", then older tokens are revoked, newer ones and those issued at T stand', () => {
    const entries = [entry({ issuedBefore: '2026-12-02T12:00:00.000Z' })];
    expect(tokenRevocation(entries, { subject: 'alice', issuedAt: '2026-12-02T11:59:59.000Z' }).revoked).toBe(true);
    expect(tokenRevocation(entries, { subject: 'alice', issuedAt: '2026-12-02T12:00:00.000Z' }).revoked).toBe(false);
    expect(tokenRevocation(entries, { subject: 'alice', issuedAt: '2026-12-02T12:00:01.000Z' }).revoked).toBe(false);
  });

  it('given "issued before T", when the token has no iat, then it counts as issued before', () => {
    expect(tokenRevocation([entry({ issuedBefore: '2026-12-02T12:00:00.000Z' })], { subject: 'alice' }).revoked).toBe(
      true,
    );
  });

  it('given a jti and a time, then both must hold', () => {
    const entries = [entry({ jti: 't-1', issuedBefore: '2026-12-02T12:00:00.000Z' })];
    expect(tokenRevocation(entries, { subject: 'alice', jti: 't-1', issuedAt: '2026-12-02T11:00:00Z' }).revoked).toBe(
      true,
    );
    expect(tokenRevocation(entries, { subject: 'alice', jti: 't-1', issuedAt: '2026-12-02T13:00:00Z' }).revoked).toBe(
      false,
    );
    expect(tokenRevocation(entries, { subject: 'alice', jti: 't-2', issuedAt: '2026-12-02T11:00:00Z' }).revoked).toBe(
      false,
    );
  });
});

describe('principalRevocation', () => {
  const started = (at: string) => at;

  it('given an entry for the whole subject, then every run of the subject loses its standing', () => {
    expect(principalRevocation([entry()], 'alice', started('2026-12-02T13:00:00.000Z')).revoked).toBe(true);
    expect(principalRevocation([entry()], 'bob', started('2026-12-02T13:00:00.000Z')).revoked).toBe(false);
  });

  it('given a narrowed entry, then a run started before it was added is revoked and a later run stands', () => {
    const entries = [entry({ jti: 't-1' }), entry({ id: 'r2', issuedBefore: '2026-12-02T11:00:00.000Z' })];
    expect(principalRevocation(entries, 'alice', started('2026-12-02T11:30:00.000Z'))).toMatchObject({
      revoked: true,
      entryId: 'r1',
    });
    expect(principalRevocation(entries, 'alice', started('2026-12-02T12:00:00.000Z')).revoked).toBe(false);
  });

  it('given no start time, then any entry of the subject revokes', () => {
    expect(principalRevocation([entry({ jti: 't-1' })], 'alice', undefined).revoked).toBe(true);
  });
});
