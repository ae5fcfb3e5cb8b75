import { choicesOf, decideApproval, maySee, verifyUse, type ApprovalFacts } from './approval.decider';

const NOW = new Date('2027-01-01T12:00:00Z');
const pending = (over: Partial<ApprovalFacts> = {}): ApprovalFacts => ({
  kind: 'tool',
  status: 'pending',
  role: 'approver',
  fourEyes: false,
  requestedBy: 'alice',
  expiresAt: '2027-01-01T13:00:00Z',
  runId: 'run_1',
  callId: 'call_1',
  argsDigest: 'sha256:abc',
  decision: null,
  ...over,
});
const bob = { id: 'bob', roles: ['approver'] };
const alice = { id: 'alice', roles: ['approver', 'runner'] };

describe('approval decider: deciding', () => {
  it('given a pending tool approval, when an approver approves, then it is granted', () => {
    expect(decideApproval(pending(), 'approve', bob, NOW)).toEqual({
      kind: 'decided',
      decision: 'granted',
      status: 'granted',
    });
    expect(decideApproval(pending(), 'reject', bob, NOW)).toMatchObject({ decision: 'rejected', status: 'rejected' });
  });

  it('given an escalation, when it is resolved, then the decision is the choice and the status resolved', () => {
    for (const choice of ['happened', 'retry', 'fail'] as const)
      expect(decideApproval(pending({ kind: 'escalation' }), choice, bob, NOW)).toEqual({
        kind: 'decided',
        decision: choice,
        status: 'resolved',
      });
  });

  it('refuses a choice of the other kind, naming the valid ones', () => {
    expect(decideApproval(pending(), 'happened', bob, NOW)).toEqual({
      kind: 'refused',
      code: 'invalid',
      message: 'a tool approval is decided with one of: approve, reject',
    });
    expect(decideApproval(pending({ kind: 'escalation' }), 'approve', bob, NOW)).toMatchObject({ code: 'invalid' });
  });

  it('refuses a principal without the role', () => {
    expect(decideApproval(pending(), 'approve', { id: 'carol', roles: ['runner', 'viewer'] }, NOW)).toEqual({
      kind: 'refused',
      code: 'forbidden',
      message: 'deciding this approval needs the role approver',
    });
  });

  it('with four-eyes, refuses the principal that started the run, and accepts another', () => {
    expect(decideApproval(pending({ fourEyes: true }), 'approve', alice, NOW)).toMatchObject({
      kind: 'refused',
      code: 'forbidden',
    });
    expect(decideApproval(pending({ fourEyes: false }), 'approve', alice, NOW)).toMatchObject({ kind: 'decided' });
    expect(decideApproval(pending({ fourEyes: true }), 'approve', bob, NOW)).toMatchObject({ kind: 'decided' });
  });

  it('given a decided approval, refuses a second decision naming who decided', () => {
    expect(decideApproval(pending({ status: 'granted', decision: { by: 'bob' } }), 'reject', bob, NOW)).toEqual({
      kind: 'refused',
      code: 'conflict',
      message: 'this approval was already decided: granted by bob',
    });
  });

  it('given an approval closed because its run stopped, refuses a decision naming why', () => {
    const closed = pending({
      status: 'cancelled',
      decision: { by: 'system:run-stop', reason: 'its run run_1 stopped: wrong boat' },
    });
    expect(decideApproval(closed, 'approve', bob, NOW)).toEqual({
      kind: 'refused',
      code: 'conflict',
      message: 'this approval was cancelled: its run run_1 stopped: wrong boat',
    });
    expect(choicesOf(closed)).toEqual([]);
  });

  it('given an approval past its deadline, expires it instead of deciding (at the deadline too)', () => {
    expect(decideApproval(pending({ expiresAt: '2027-01-01T11:59:59Z' }), 'approve', bob, NOW)).toEqual({
      kind: 'expired',
      message: 'this approval expired at 2027-01-01T11:59:59Z',
    });
    expect(decideApproval(pending({ expiresAt: NOW.toISOString() }), 'approve', bob, NOW)).toMatchObject({
      kind: 'expired',
    });
    expect(decideApproval(pending({ expiresAt: null }), 'approve', bob, NOW)).toMatchObject({ kind: 'decided' });
  });
});

describe('approval decider: using a grant', () => {
  const granted = (over: Partial<ApprovalFacts> = {}) =>
    pending({ status: 'granted', decision: { by: 'bob' }, ...over });
  const use = { runId: 'run_1', callId: 'call_1', argsDigest: 'sha256:abc' };

  it('given a grant for this call and these arguments, when the call runs before expiry, then it is valid', () => {
    expect(verifyUse(granted(), use, NOW)).toEqual({ valid: true });
  });

  it.each([
    ['an escalation', pending({ kind: 'escalation', status: 'resolved' }), use, 'approval.kind'],
    ['another call', granted(), { ...use, callId: 'call_2' }, 'approval.mismatch'],
    ['another run', granted(), { ...use, runId: 'run_2' }, 'approval.mismatch'],
    ['a rejection', pending({ status: 'rejected', decision: { by: 'bob' } }), use, 'approval.not_granted'],
    ['a pending approval', pending(), use, 'approval.not_granted'],
    [
      'a self-approval under four-eyes',
      granted({ fourEyes: true, decision: { by: 'alice' } }),
      use,
      'approval.four_eyes',
    ],
    ['an expired grant', granted({ expiresAt: '2027-01-01T11:00:00Z' }), use, 'approval.expired'],
    ['other arguments', granted(), { ...use, argsDigest: 'sha256:def' }, 'approval.args_mismatch'],
  ])('refuses %s, naming why', (_what, approval, request, code) => {
    const verdict = verifyUse(approval, request, NOW);
    expect(verdict.valid).toBe(false);
    expect(!verdict.valid && verdict.reason.startsWith(`${code}:`)).toBe(true);
  });
});

describe('approval decider: who sees what', () => {
  it('admins and viewers see every approval; an approver sees those of its roles', () => {
    expect(maySee({ id: 'v', roles: ['viewer'] }, { role: 'finance' })).toBe(true);
    expect(maySee({ id: 'a', roles: ['admin'] }, { role: 'finance' })).toBe(true);
    expect(maySee(bob, { role: 'approver' })).toBe(true);
    expect(maySee(bob, { role: 'finance' })).toBe(false);
  });

  it('offers the choices of its kind while pending, none once decided', () => {
    expect(choicesOf({ kind: 'tool', status: 'pending' })).toEqual(['approve', 'reject']);
    expect(choicesOf({ kind: 'escalation', status: 'pending' })).toEqual(['happened', 'retry', 'fail']);
    expect(choicesOf({ kind: 'tool', status: 'granted' })).toEqual([]);
  });
});
