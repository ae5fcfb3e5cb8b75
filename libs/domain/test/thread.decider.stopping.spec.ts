import type { NewEvent } from '@ratchet/contracts';
import { modelCommandId, modelRetryDelayMs, type RecordModelResult, type ResumeRun } from '../src';
import { AT, given, run } from './decider.specification';
import { call, cancel, modelAnswers, requestRun, toolCompletes } from './fixtures';

const types = (events: NewEvent[]) => events.map((e) => e.type);

function modelFails(
  runId: string,
  step: number,
  attempt: number,
  error: { code: string; retryable: boolean; retryAfterMs?: number },
  at = AT,
): RecordModelResult {
  return {
    ...modelAnswers(runId, step, [], null, attempt),
    at,
    outcome: { status: 'error', error: { message: `it said ${error.code}`, ...error } },
  };
}

const resume = (reason = 'watchdog: the model call is lost'): ResumeRun => ({
  type: 'ResumeRun',
  tenantId: 'acme',
  threadId: 'th-1',
  at: AT,
  runId: 'r1',
  reason,
  worker: 'w2',
  fromVersion: 4,
});

describe('model attempts', () => {
  it('retries a retryable failure as the next attempt, not before its backoff', () => {
    const d = given(run([requestRun('r1')]).events).when(modelFails('r1', 1, 1, { code: 'timeout', retryable: true }));
    const wait = modelRetryDelayMs(1, undefined, modelCommandId('r1', 1, 1));
    const notBefore = new Date(Date.parse(AT) + wait).toISOString();
    expect(d.events).toEqual([
      {
        type: 'model.requested',
        runId: 'r1',
        data: {
          step: 1,
          attempt: 2,
          commandId: modelCommandId('r1', 1, 2),
          retryReason: 'attempt 1 failed: timeout: it said timeout',
          notBefore,
        },
      },
    ]);
    expect(d.outgoing).toEqual([
      { kind: 'model.call', runId: 'r1', step: 1, attempt: 2, commandId: modelCommandId('r1', 1, 2), notBefore },
    ]);
    expect(d.after.active?.modelCall).toEqual({ commandId: modelCommandId('r1', 1, 2), attempt: 2, notBefore });
  });

  it('waits at least as long as the provider asked (Retry-After)', () => {
    const d = given(run([requestRun('r1')]).events).when(
      modelFails('r1', 1, 1, { code: 'rate_limited', retryable: true, retryAfterMs: 20_000 }),
    );
    const notBefore = (d.events[0]?.data as { notBefore: string }).notBefore;
    expect(Date.parse(notBefore) - Date.parse(AT)).toBeGreaterThanOrEqual(20_000);
  });

  it('spreads the backoff of runs that failed together, and grows it per attempt', () => {
    const first = new Set(Array.from({ length: 20 }, (_, i) => modelRetryDelayMs(1, undefined, `run-${i}:model:1:1`)));
    expect(first.size).toBeGreaterThan(10);
    for (const ms of first) expect(ms).toBeGreaterThanOrEqual(500);
    for (const ms of first) expect(ms).toBeLessThanOrEqual(1000);
    expect(modelRetryDelayMs(3, undefined, 'x')).toBeGreaterThanOrEqual(2000);
    expect(modelRetryDelayMs(30, undefined, 'x')).toBeLessThanOrEqual(60_000);
  });

  it('fails the run past its attempts, naming the step, the attempts and the last error', () => {
    let history = run([requestRun('r1')]).events;
    for (const attempt of [1, 2]) {
      const d = given(history).when(modelFails('r1', 1, attempt, { code: 'rate_limited', retryable: true }));
      expect(types(d.events)).toEqual(['model.requested']);
      history = [...history, ...d.events];
    }
    const last = given(history).when(modelFails('r1', 1, 3, { code: 'rate_limited', retryable: true }));
    expect(types(last.events)).toEqual(['run.failed']);
    expect(last.events[0]?.data).toEqual({
      error: {
        code: 'model.rate_limited',
        message: 'step 1: the model call failed 3 times (the limit is 3 attempts); last error: it said rate_limited',
        retryable: false,
      },
    });
  });

  it('takes its bound from the run (fixed when it was requested)', () => {
    const history = run([requestRun('r1', { limits: { modelAttempts: 1 } })]).events;
    expect(history.find((e) => e.type === 'run.requested')?.data).toMatchObject({ limits: { modelAttempts: 1 } });
    const d = given(history).when(modelFails('r1', 1, 1, { code: 'timeout', retryable: true }));
    expect(types(d.events)).toEqual(['run.failed']);
    expect(d.events[0]).toMatchObject({ data: { error: { code: 'model.timeout' } } });
  });

  it('fails at once on an error no retry can mend', () => {
    const d = given(run([requestRun('r1')]).events).when(
      modelFails('r1', 1, 1, { code: 'unauthorized', retryable: false }),
    );
    expect(types(d.events)).toEqual(['run.failed']);
    expect(d.events[0]).toMatchObject({
      data: { error: { code: 'model.unauthorized', message: 'step 1, attempt 1: it said unauthorized' } },
    });
  });

  it('counts a call the watchdog found lost as an attempt, and gives up past the bound', () => {
    let history = run([requestRun('r1', { limits: { modelAttempts: 2 } })]).events;
    const first = given(history).when(resume());
    expect(types(first.events)).toEqual(['run.resumed', 'model.requested']);
    expect(first.outgoing).toEqual([expect.objectContaining({ kind: 'model.call', attempt: 2 })]);
    history = [...history, ...first.events];
    const second = given(history).when(resume());
    expect(types(second.events)).toEqual(['run.failed']);
    expect(second.events[0]).toMatchObject({ data: { error: { code: 'model.lost' } } });
    expect(second.outgoing).toEqual([expect.objectContaining({ kind: 'run.stop' })]);
  });

  it('counts a redelivery to a new worker as an attempt, and gives up past the bound', () => {
    const history = run([requestRun('r1', { limits: { modelAttempts: 2 } })]).events;
    const notice = (delivery: number) => ({
      type: 'RecordModelAttempt' as const,
      tenantId: 'acme',
      threadId: 'th-1',
      at: AT,
      runId: 'r1',
      commandId: modelCommandId('r1', 1, 1),
      delivery,
      worker: `w${delivery}`,
    });
    const second = given(history).when(notice(2));
    expect(types(second.events)).toEqual(['model.requested']);
    const third = given([...history, ...second.events]).when(notice(3));
    expect(types(third.events)).toEqual(['run.failed']);
    expect(third.events[0]).toMatchObject({ data: { error: { code: 'model.worker_lost' } } });
  });
});

describe('stopping a run stops its work and records what really happened', () => {
  const inTools = () =>
    run([
      requestRun('r1', { replyTo: 'svc.replies' }),
      modelAnswers('r1', 1, [call('a'), call('b'), call('c')], null),
      toolCompletes('r1', 1, 'a'),
    ]).events;

  it('tells every worker the run stopped, and names the calls whose outcome is still to come', () => {
    const d = given(inTools()).when(cancel('r1'));
    expect(d.events).toEqual([
      {
        type: 'run.cancelled',
        runId: 'r1',
        data: { by: 'alice', reason: 'user asked', closedCalls: [], pendingCalls: ['b', 'c'] },
      },
    ]);
    expect(d.outgoing).toEqual([
      { kind: 'run.stop', runId: 'r1', reason: 'user asked' },
      expect.objectContaining({
        kind: 'reply',
        outcome: expect.objectContaining({ status: 'cancelled', outcomeId: 'r1:outcome:cancelled' }),
      }),
    ]);
  });

  it('stops a model call in flight', () => {
    const d = given(run([requestRun('r1')]).events).when(cancel('r1'));
    expect(types(d.events)).toEqual(['run.cancelled']);
    expect(d.outgoing[0]).toEqual({ kind: 'run.stop', runId: 'r1', reason: 'user asked' });
    // The aborted call's answer, when it comes, is recorded as ignored: the run no longer waits for it.
    const late = given([...run([requestRun('r1')]).events, ...d.events]).when(
      modelFails('r1', 1, 1, { code: 'aborted', retryable: true }),
    );
    expect(late.events).toEqual([
      {
        type: 'result.ignored',
        runId: 'r1',
        data: expect.objectContaining({ kind: 'model.result', outcome: 'error:aborted' }),
      },
    ]);
  });

  it('appends the real outcome of each call still out after the end, once', () => {
    const history = inTools();
    const cancelled = given(history).when(cancel('r1'));
    const after = [...history, ...cancelled.events];
    const completed = given(after).when(toolCompletes('r1', 1, 'b', { paid: true }));
    expect(completed.events).toEqual([
      { type: 'tool.completed', runId: 'r1', data: { step: 1, callId: 'b', result: { paid: true } } },
    ]);
    // The conversation already answered the call when the run stopped: the late outcome is the log's only.
    expect(completed.after.transcript).toEqual(cancelled.after.transcript);
    const notStarted = given([...after, ...completed.events]).when({
      ...toolCompletes('r1', 1, 'c'),
      outcome: { status: 'cancelled', reason: 'the run stopped before the call started' },
    });
    expect(notStarted.events).toEqual([
      {
        type: 'tool.cancelled',
        runId: 'r1',
        data: { step: 1, callId: 'c', reason: 'the run stopped before the call started' },
      },
    ]);
    expect(notStarted.after.settling).toBeUndefined();
    // A second outcome for a settled call is a stray: recorded as ignored.
    const again = given([...after, ...completed.events, ...notStarted.events]).when(toolCompletes('r1', 1, 'b'));
    expect(types(again.events)).toEqual(['result.ignored']);
  });

  it('escalates an uncertain effect of a stopped run to a human, on behalf of its principal', () => {
    const history = [...inTools(), ...given(inTools()).when(cancel('r1')).events];
    const d = given(history).when({
      ...toolCompletes('r1', 1, 'b'),
      outcome: { status: 'uncertain', idempotencyKey: 'acme:th-1:r1:1:b', reason: 'it stopped mid-effect' },
    });
    expect(types(d.events)).toEqual(['effect.uncertain']);
    expect(d.outgoing).toEqual([
      expect.objectContaining({
        kind: 'escalation.request',
        runId: 'r1',
        callId: 'b',
        idempotencyKey: 'acme:th-1:r1:1:b',
        principal: { id: 'alice', roles: ['runner'] },
      }),
    ]);
    expect(d.after.settling).toEqual([
      expect.objectContaining({ callId: 'b', status: 'uncertain' }),
      expect.objectContaining({ callId: 'c', status: 'requested' }),
    ]);
    // The human's answer, later, is the outcome.
    const resolved = given([...history, ...d.events]).when(toolCompletes('r1', 1, 'b', { happened: true }));
    expect(types(resolved.events)).toEqual(['tool.completed']);
  });

  it('closes a call waiting for an approval for good: it never ran and now never will', () => {
    const history = run([
      requestRun('r1'),
      {
        ...modelAnswers('r1', 1, [call('a')], null),
        approvals: {
          a: { approvalId: 'ap1', role: 'approver', expiresAt: AT, argsDigest: 'd', fourEyes: false },
        },
      },
    ]).events;
    const d = given(history).when(cancel('r1'));
    expect(types(d.events)).toEqual(['tool.failed', 'run.cancelled']);
    expect(d.events[1]).toMatchObject({ data: { closedCalls: ['a'] } });
    expect(d.after.settling).toBeUndefined();
  });

  it('lets the next run start while calls of the stopped one settle', () => {
    const history = [...inTools(), ...given(inTools()).when(cancel('r1')).events];
    const next = given(history).when(requestRun('r2'));
    expect(types(next.events)).toEqual(['run.requested', 'run.started', 'model.requested']);
    const late = given([...history, ...next.events]).when(toolCompletes('r1', 1, 'b'));
    expect(types(late.events)).toEqual(['tool.completed']);
    expect(late.after.active?.runId).toBe('r2');
  });
});

describe('a request id used again', () => {
  const digest = 'sha256:first';
  const ended = () =>
    run([requestRun('r1', { requestDigest: digest, replyTo: 'svc.a' }), modelAnswers('r1', 1)]).events;

  it('is answered with the run it started, once that run ended', () => {
    const d = given(ended()).when(requestRun('r1', { requestDigest: digest, replyTo: 'svc.b' }));
    expect(d.events).toEqual([]);
    expect(d.outgoing).toEqual([
      {
        kind: 'reply',
        replyTo: 'svc.b',
        outcome: {
          outcomeId: 'r1:outcome:completed',
          requestId: 'req-r1',
          runId: 'r1',
          status: 'completed',
          output: 'done',
          tenantId: 'acme',
          threadId: 'th-1',
        },
      },
    ]);
  });

  it('changes nothing while its run is still going', () => {
    const history = run([requestRun('r1', { requestDigest: digest })]).events;
    expect(given(history).when(requestRun('r1', { requestDigest: digest, replyTo: 'svc.b' }))).toMatchObject({
      events: [],
      outgoing: [],
    });
  });

  it('with a different body is refused as a conflict and recorded', () => {
    const d = given(ended()).when(
      requestRun('r1', { requestDigest: 'sha256:other', replyTo: 'svc.b', input: [{ role: 'user', content: 'x' }] }),
    );
    expect(d.events).toEqual([
      {
        type: 'run.rejected',
        data: {
          requestId: 'req-r1',
          error: {
            code: 'request.conflict',
            message:
              'request id req-r1 was already used for run r1 with a different body; send a new request id for a new run',
            retryable: false,
          },
        },
      },
    ]);
    expect(d.outgoing).toEqual([
      expect.objectContaining({
        kind: 'reply',
        replyTo: 'svc.b',
        outcome: expect.objectContaining({
          status: 'rejected',
          error: expect.objectContaining({ code: 'request.conflict' }),
        }),
      }),
    ]);
  });

  it('naming another thread is refused as a conflict, even with the same body', () => {
    const { state } = given([]);
    const known = { runId: 'r1', threadId: 'th-elsewhere', requestDigest: digest, outcome: null };
    const d = given([]).when(requestRun('r1', { requestDigest: digest, known }));
    expect(state.threadId).toBeNull();
    expect(types(d.events)).toEqual(['thread.created', 'run.rejected']);
    expect(d.events[1]).toMatchObject({ data: { error: { message: expect.stringContaining('thread th-elsewhere') } } });
    expect(d.after.active).toBeNull();
    expect(d.after.runs).toEqual({});
  });
});
