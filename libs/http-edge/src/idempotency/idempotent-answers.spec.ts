import { answerSubjects, decideOnTakenKey, keyProblem, requestFingerprint } from './idempotent-answers';

const NOW = Date.parse('2027-09-01T12:00:00.000Z');
const asked = { operation: 'POST /v1/runs/:runId/cancel', fingerprint: 'sha256:a' };

describe('a key another request took first', () => {
  it('answered for the same request: the stored answer, status and body', () => {
    const decision = decideOnTakenKey({ ...asked, answer: { status: 202, body: { runId: 'run_1' } } }, asked, NOW);
    expect(decision).toEqual({ kind: 'replay', status: 202, body: { runId: 'run_1' } });
  });

  it('with another fingerprint or on another operation: a conflict naming the operation it was used on', () => {
    const stored = { ...asked, answer: { status: 202, body: {} } };
    expect(decideOnTakenKey(stored, { ...asked, fingerprint: 'sha256:b' }, NOW)).toEqual({
      kind: 'conflict',
      operation: asked.operation,
    });
    expect(decideOnTakenKey(stored, { ...asked, operation: 'POST /v1/runs' }, NOW)).toEqual({
      kind: 'conflict',
      operation: asked.operation,
    });
  });

  it('still being answered: in progress, retry when its hold ends (at least a second)', () => {
    const held = { ...asked, lockedUntil: new Date(NOW + 12_500).toISOString() };
    expect(decideOnTakenKey(held, asked, NOW)).toEqual({ kind: 'in_progress', retryAfterSeconds: 13 });
    const ending = { ...asked, lockedUntil: new Date(NOW - 1).toISOString() };
    expect(decideOnTakenKey(ending, asked, NOW)).toEqual({ kind: 'in_progress', retryAfterSeconds: 1 });
  });

  it('a request still being answered with another body is a conflict, not a wait', () => {
    const held = { ...asked, lockedUntil: new Date(NOW + 10_000).toISOString() };
    expect(decideOnTakenKey(held, { ...asked, fingerprint: 'sha256:b' }, NOW).kind).toBe('conflict');
  });
});

describe('the problems a key answers with', () => {
  it('a conflict is 409 request.conflict naming the key and the operation', () => {
    const problem = keyProblem('k-1', { kind: 'conflict', operation: 'POST /v1/schedules' }).problem;
    expect(problem).toMatchObject({
      status: 409,
      code: 'request.conflict',
      idempotencyKey: 'k-1',
      operation: 'POST /v1/schedules',
    });
    expect(problem.detail).toContain('k-1');
  });

  it('in progress is 409 request.in_progress with Retry-After', () => {
    const e = keyProblem('k-1', { kind: 'in_progress', retryAfterSeconds: 7 });
    expect(e.problem).toMatchObject({ status: 409, code: 'request.in_progress' });
    expect(e.headers).toEqual({ 'Retry-After': '7' });
  });
});

describe('a request fingerprint', () => {
  const base = {
    principalId: 'key:a',
    operation: 'POST /v1/schedules',
    params: {},
    query: {},
    body: { a: 1, b: [1, 2] },
  };

  it('does not depend on key order', () => {
    expect(requestFingerprint(base)).toBe(requestFingerprint({ ...base, body: { b: [1, 2], a: 1 } }));
  });

  it('differs with the sender, the operation, the parameters and the body', () => {
    const fp = requestFingerprint(base);
    expect(requestFingerprint({ ...base, principalId: 'key:b' })).not.toBe(fp);
    expect(requestFingerprint({ ...base, operation: 'PATCH /v1/schedules/:id' })).not.toBe(fp);
    expect(requestFingerprint({ ...base, params: { id: 'x' } })).not.toBe(fp);
    expect(requestFingerprint({ ...base, body: { a: 2, b: [1, 2] } })).not.toBe(fp);
    expect(requestFingerprint({ ...base, body: { a: 1, b: [2, 1] } })).not.toBe(fp);
  });
});

describe('what an answer names', () => {
  it('its top-level threadId and runId, nothing else', () => {
    expect(answerSubjects({ threadId: 'th_1', runId: 'run_1', x: 1 })).toEqual({ threadId: 'th_1', runId: 'run_1' });
    expect(answerSubjects({ schedule: { threadId: 'th_1' } })).toEqual({});
    expect(answerSubjects(null)).toEqual({});
  });
});
