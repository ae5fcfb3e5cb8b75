import { decideApproval, type ApprovalFacts } from './approval.decider';
import { completeWaitpoint, type WaitpointFacts } from './waitpoint.decider';

const NOW = new Date('2027-01-01T12:00:00Z');
const pending = (over: Partial<WaitpointFacts> = {}): WaitpointFacts => ({
  kind: 'waitpoint',
  status: 'pending',
  expiresAt: '2027-01-01T13:00:00Z',
  decision: null,
  ...over,
});
const done = { outcome: 'completed' as const, result: { build: 42, status: 'green' } };
const broke = { outcome: 'failed' as const, error: { code: 'ci.red', message: 'the build failed' } };

describe('waitpoint decider: completing', () => {
  it('given a pending waitpoint, when it is completed with a result that fits, then that result is recorded', () => {
    expect(completeWaitpoint(pending(), done, [], NOW)).toEqual({
      kind: 'complete',
      decision: 'completed',
      result: done.result,
    });
  });

  it('given a pending waitpoint, when the outside world reports a failure, then the error is recorded', () => {
    expect(completeWaitpoint(pending(), broke, [], NOW)).toEqual({
      kind: 'complete',
      decision: 'failed',
      result: broke.error,
    });
  });

  it('given a result that does not fit the schema, then it is refused naming the problems, and nothing is recorded', () => {
    expect(completeWaitpoint(pending(), done, ['/build: must be string', '/url: is required'], NOW)).toEqual({
      kind: 'refused',
      refusal: 'waitpoint.invalid_result',
      message: "the result does not fit the waitpoint's schema: /build: must be string; /url: is required",
    });
  });

  it('given a completed waitpoint, when the same completion comes again (keys in another order), then it is a replay', () => {
    const completed = pending({
      status: 'completed',
      decision: { decision: 'completed', by: 'ci-bot', reason: '', result: { status: 'green', build: 42 } },
    });
    expect(completeWaitpoint(completed, done, [], NOW)).toEqual({ kind: 'replay' });
  });

  it('given a completed waitpoint, when another body comes, then it is a conflict naming who completed it', () => {
    const completed = pending({
      status: 'completed',
      decision: { decision: 'completed', by: 'ci-bot', reason: '', result: { build: 41 } },
    });
    expect(completeWaitpoint(completed, done, [], NOW)).toEqual({
      kind: 'refused',
      refusal: 'waitpoint.conflict',
      message: 'this waitpoint was already completed by ci-bot, with another result',
    });
    expect(completeWaitpoint(completed, broke, [], NOW)).toMatchObject({ refusal: 'waitpoint.conflict' });
  });

  it('given a waitpoint past its TTL that the sweeper has not expired yet, then it expires now and the completion is refused', () => {
    expect(completeWaitpoint(pending({ expiresAt: '2027-01-01T12:00:00Z' }), done, [], NOW)).toEqual({
      kind: 'expire',
      refusal: 'waitpoint.expired',
      message: 'this waitpoint expired at 2027-01-01T12:00:00Z',
    });
  });

  it('given an expired or a closed waitpoint, then the completion is refused with its name', () => {
    expect(completeWaitpoint(pending({ status: 'expired' }), done, [], NOW)).toMatchObject({
      kind: 'refused',
      refusal: 'waitpoint.expired',
    });
    const closed = pending({
      status: 'cancelled',
      decision: { decision: 'cancelled', by: 'system:run-stop', reason: 'its run r1 stopped: cancelled', result: null },
    });
    expect(completeWaitpoint(closed, done, [], NOW)).toEqual({
      kind: 'refused',
      refusal: 'waitpoint.closed',
      message: 'this waitpoint was closed: its run r1 stopped: cancelled',
    });
  });

  it('given an approval or an escalation, then it cannot be completed; and a waitpoint cannot be decided', () => {
    expect(completeWaitpoint(pending({ kind: 'tool' }), done, [], NOW)).toMatchObject({
      refusal: 'waitpoint.not_a_waitpoint',
    });
    const waitpoint: ApprovalFacts = {
      kind: 'waitpoint',
      status: 'pending',
      role: 'runner',
      fourEyes: false,
      requestedBy: 'alice',
      expiresAt: null,
      runId: 'r1',
      callId: 'c1',
      argsDigest: 'sha256:x',
      decision: null,
    };
    expect(decideApproval(waitpoint, 'approve', { id: 'bob', roles: ['runner'] }, NOW)).toMatchObject({
      kind: 'refused',
      code: 'invalid',
    });
  });
});
