import { subjects, type PrincipalRevokedMessage } from '@ratchet/contracts';
import { revocationMessages, revocationReason } from './revocation-messages';

const s = subjects('rt');
const revoked: PrincipalRevokedMessage = {
  kind: 'principal.revoked',
  messageId: 'revocation:key:k1',
  tenantId: 'acme',
  principalId: 'key:k1',
  scope: 'principal',
  at: '2027-09-01T12:00:00.000Z',
  by: 'cli:ops',
  reason: 'laptop lost',
};

describe('what a revocation does to the runs it found', () => {
  it('given two runs of the principal, when it is revoked, then each gets a run.cancel on its thread inbox', () => {
    const rows = revocationMessages(
      revoked,
      [
        { runId: 'run_a', threadId: 'th_a' },
        { runId: 'run_b', threadId: 'th_b' },
      ],
      s,
    );
    expect(rows).toEqual([
      {
        id: 'revocation:key:k1:run_a',
        subject: 'rt.inbox.acme.th_a',
        headers: { 'Ratchet-Message-Type': 'run.cancel', 'Ratchet-Tenant': 'acme' },
        payload: {
          kind: 'run.cancel',
          messageId: 'revocation:key:k1:run_a',
          tenantId: 'acme',
          threadId: 'th_a',
          runId: 'run_a',
          by: 'cli:ops',
          reason: 'principal.revoked: key:k1 revoked by cli:ops at 2027-09-01T12:00:00.000Z (laptop lost)',
        },
      },
      expect.objectContaining({ id: 'revocation:key:k1:run_b', subject: 'rt.inbox.acme.th_b' }),
    ]);
  });

  it('given the same revocation handled twice, then its messages are the same (ids derived, not drawn)', () => {
    const runs = [{ runId: 'run_a', threadId: 'th_a' }];
    expect(revocationMessages(revoked, runs, s)).toEqual(revocationMessages(revoked, runs, s));
  });

  it('given no runs, then nothing is sent', () => {
    expect(revocationMessages(revoked, [], s)).toEqual([]);
  });

  it('the reason starts with principal.revoked, names some tokens for a narrowed entry, and omits an empty why', () => {
    expect(revocationReason({ ...revoked, scope: 'tokens', reason: ' ' })).toBe(
      'principal.revoked: tokens of key:k1 revoked by cli:ops at 2027-09-01T12:00:00.000Z',
    );
    expect(revocationReason({ ...revoked, reason: 'x'.repeat(5000) })).toHaveLength(1000);
  });
});
