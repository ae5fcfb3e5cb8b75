import type { NewEvent } from '@ratchet/contracts';
import { TENANT_CAP_CODE, TENANT_COST_CAP_CODE, type RecordModelResult, type ThreadCommand } from '../src';
import { AT, given, run } from './decider.specification';
import { call, modelAnswers, requestRun, toolCompletes } from './fixtures';

const types = (events: NewEvent[]) => events.map((e) => e.type);
const later = (seconds: number) => new Date(Date.parse(AT) + seconds * 1000).toISOString();
const answer = (step: number, usage: { inputTokens: number; outputTokens: number }, calls = [call(`c${step}`)]) => {
  const a = modelAnswers('r1', step, calls, null);
  return { ...a, outcome: { ...a.outcome, usage } } as RecordModelResult;
};

describe('run budgets', () => {
  it('fails the run before a model call past its model-call budget, naming the budget, and stops its work', () => {
    const history = run([
      requestRun('r1', { maxSteps: 10, limits: { modelCalls: 2 } }),
      answer(1, { inputTokens: 1, outputTokens: 1 }),
      toolCompletes('r1', 1, 'c1'),
      answer(2, { inputTokens: 1, outputTokens: 1 }),
    ]).events;
    const d = given(history).when(toolCompletes('r1', 2, 'c2'));
    expect(types(d.events)).toEqual(['tool.completed', 'run.failed']);
    expect(d.events[1]?.data).toEqual({
      error: {
        code: 'budget.exceeded',
        message: 'model-call budget: the run made 2 model calls, its budget (2); it stops before another',
        retryable: false,
      },
      budget: 'modelCalls',
    });
    expect(d.outgoing.map((o) => o.kind)).toEqual(['run.stop']);
  });

  it('counts every attempt: a retry that would pass the budget is not made', () => {
    const history = run([requestRun('r1', { limits: { modelCalls: 1, modelAttempts: 3 } })]).events;
    const failedAttempt = {
      ...modelAnswers('r1', 1),
      outcome: { status: 'error' as const, error: { code: 'timeout', message: 'slow', retryable: true } },
    };
    const d = given(history).when(failedAttempt);
    expect(types(d.events)).toEqual(['run.failed']);
    expect(d.events[0]).toMatchObject({ data: { budget: 'modelCalls' } });
  });

  it('records an answer that passes the token budget, then fails the run without sending its calls', () => {
    const history = run([requestRun('r1', { limits: { tokens: 1000 } })]).events;
    const d = given(history).when(answer(1, { inputTokens: 900, outputTokens: 200 }));
    // Each call is closed (not sent), so the conversation stays valid for the thread's next run.
    expect(types(d.events)).toEqual(['model.responded', 'tool.requested', 'tool.failed', 'run.failed']);
    expect(d.after.transcript.at(-1)).toMatchObject({ role: 'tool', isError: true });
    expect(d.events[3]).toMatchObject({
      data: {
        budget: 'tokens',
        error: {
          code: 'budget.exceeded',
          message: 'token budget: the run has used 1100 tokens, past its budget of 1000',
        },
      },
    });
    expect(d.outgoing.filter((o) => o.kind === 'tool.call')).toEqual([]);
  });

  it("stops a run whose model call its tenant's token cap refused, naming the tenant's budget; nothing is retried", () => {
    const history = run([requestRun('r1', { limits: { modelAttempts: 3 } })]).events;
    const refused = {
      ...modelAnswers('r1', 1),
      outcome: {
        status: 'error' as const,
        error: {
          code: TENANT_CAP_CODE,
          message:
            'the daily cap is 100 tokens; 90 are used or reserved today (UTC) and this model call may use up to 20, so it was not made',
          retryable: false,
        },
      },
    };
    const d = given(history).when(refused);
    expect(types(d.events)).toEqual(['run.failed']);
    expect(d.events[0]?.data).toEqual({
      error: {
        code: 'budget.exceeded',
        message:
          'tenant token cap: the daily cap is 100 tokens; 90 are used or reserved today (UTC) and this model call may use up to 20, so it was not made',
        retryable: false,
      },
      budget: 'tenantTokens',
    });
    expect(d.outgoing.map((o) => o.kind)).toEqual(['run.stop']);
  });

  it("stops a run whose model call its tenant's cost cap refused, naming the tenant's cost budget", () => {
    const history = run([requestRun('r1')]).events;
    const refused = {
      ...modelAnswers('r1', 1),
      outcome: {
        status: 'error' as const,
        error: { code: TENANT_COST_CAP_CODE, message: 'the daily cost cap is 1; …', retryable: false },
      },
    };
    const d = given(history).when(refused);
    expect(types(d.events)).toEqual(['run.failed']);
    expect(d.events[0]?.data).toMatchObject({
      budget: 'tenantCost',
      error: { code: 'budget.exceeded', message: 'tenant cost cap: the daily cost cap is 1; …' },
    });
  });

  it('fails a run past its wall-time budget at its next decision', () => {
    const history = run([
      requestRun('r1', { limits: { wallTimeSeconds: 60 } }),
      answer(1, { inputTokens: 1, outputTokens: 1 }),
    ]).events;
    const d = given(history).when({ ...toolCompletes('r1', 1, 'c1'), at: later(61) });
    expect(types(d.events)).toEqual(['tool.completed', 'run.failed']);
    expect(d.events[1]).toMatchObject({ data: { budget: 'wallTime', error: { code: 'budget.exceeded' } } });
  });

  it('decides the same after a restart: the budget counts what the log says, never a fresh count', () => {
    const commands = [
      requestRun('r1', { maxSteps: 10, limits: { modelCalls: 3 } }),
      answer(1, { inputTokens: 1, outputTokens: 1 }),
      toolCompletes('r1', 1, 'c1'),
      answer(2, { inputTokens: 1, outputTokens: 1 }),
      toolCompletes('r1', 2, 'c2'),
      answer(3, { inputTokens: 1, outputTokens: 1 }),
    ];
    const { events } = run(commands);
    // The last result, decided twice (a redelivery after a crash): the same refusal, no fourth call.
    const once = given(events).when(toolCompletes('r1', 3, 'c3'));
    const again = given(events).when(toolCompletes('r1', 3, 'c3'));
    expect(once).toEqual(again);
    expect(types(once.events)).toEqual(['tool.completed', 'run.failed']);
    expect(events.filter((e) => e.type === 'model.requested')).toHaveLength(3);
  });

  it('leaves runs requested without budgets unbounded by them', () => {
    const history = run([
      requestRun('r1', { maxSteps: 10 }),
      answer(1, { inputTokens: 5_000_000, outputTokens: 1 }),
    ]).events;
    expect(types(given(history).when(toolCompletes('r1', 1, 'c1')).events)).toEqual([
      'tool.completed',
      'model.requested',
    ]);
  });
});

describe('working time: a run does not spend its time budget while it waits for a human', () => {
  const askApproval = (at: string, expiresAt = later(3 * 86_400)): RecordModelResult => ({
    ...answer(1, { inputTokens: 1, outputTokens: 1 }),
    at,
    approvals: { c1: { approvalId: 'ap-c1', role: 'approver', expiresAt, argsDigest: 'sha256:x', fourEyes: false } },
  });
  const decision = (d: 'granted' | 'expired', at: string) => ({
    type: 'RecordApprovalDecision' as const,
    tenantId: 'acme',
    threadId: 'th-1',
    at,
    runId: 'r1',
    callId: 'c1',
    approvalId: 'ap-c1',
    decision: d,
    by: d === 'granted' ? 'bob' : 'approvals',
    reason: '',
  });
  const expire = (at: string) => ({
    type: 'ExpireRun' as const,
    tenantId: 'acme',
    threadId: 'th-1',
    at,
    runId: 'r1',
    reason: 'watchdog',
  });
  /** Commands at their times (each event is stamped with its command's time, as the orchestrator does). */
  const waitingRun = (limits: { workingTimeSeconds?: number; wallTimeSeconds?: number }, ...then: ThreadCommand[]) =>
    run([requestRun('r1', { limits }), askApproval(later(2)), ...then]);
  const last = (r: ReturnType<typeof run>) => r.decisions.at(-1)?.events ?? [];

  it('stops the clock while every open call waits for an approval, and names the wait and its expiry', () => {
    const { state } = waitingRun({ workingTimeSeconds: 5 });
    expect(state.active?.waiting).toEqual({ on: 'approval', since: later(2), until: later(3 * 86_400) });
    // Its `runs` row says so beside its status (a waiting run is still running: its thread is busy).
    expect(state.runs['r1']).toMatchObject({ status: 'running', waiting: state.active?.waiting });
    const granted = waitingRun({ workingTimeSeconds: 5 }, decision('granted', later(30)));
    expect(granted.state.runs['r1']?.waiting).toBeUndefined();
  });

  it('completes a run whose approval is decided long after its budget, counting only the time it worked', () => {
    const granted = waitingRun({ workingTimeSeconds: 5 }, decision('granted', later(30)));
    expect(types(last(granted))).toEqual(['approval.granted']);
    expect(granted.state.active?.waiting).toBeUndefined();
    expect(granted.state.active?.waitedMs).toBe(28_000);
    // The tool answers 1 s after the grant: 3 s of work in all, within 5 s, so the model is asked again.
    const done = waitingRun({ workingTimeSeconds: 5 }, decision('granted', later(30)), {
      ...toolCompletes('r1', 1, 'c1'),
      at: later(31),
    });
    expect(types(last(done))).toEqual(['tool.completed', 'model.requested']);
  });

  it('fails a run whose working time passes its budget, naming working seconds and the wait left out', () => {
    const d = waitingRun({ workingTimeSeconds: 5 }, decision('granted', later(30)), {
      ...toolCompletes('r1', 1, 'c1'),
      at: later(34),
    });
    expect(types(last(d))).toEqual(['tool.completed', 'run.failed']);
    expect(last(d)[1]).toMatchObject({
      data: {
        budget: 'workingTime',
        error: {
          code: 'budget.exceeded',
          message:
            'working-time budget: the run has worked 6 s (28 s of waiting not counted), past its working-time budget of 5 s',
        },
      },
    });
  });

  it('names working time just past its budget above the budget, never as equal to it', () => {
    const d = waitingRun({ workingTimeSeconds: 5 }, decision('granted', later(30)), {
      ...toolCompletes('r1', 1, 'c1'),
      at: later(33.02),
    });
    expect(types(last(d))).toEqual(['tool.completed', 'run.failed']);
    expect(last(d)[1]).toMatchObject({
      data: { error: { message: expect.stringContaining('the run has worked 5.1 s (28 s of waiting not counted)') } },
    });
  });

  it("fails an expired approval's call with a reason that names the approval and when it expired", () => {
    const d = run([
      requestRun('r1', { limits: { workingTimeSeconds: 5 } }),
      askApproval(later(2), later(40)),
      decision('expired', later(40)),
    ]);
    expect(types(last(d))).toEqual(['approval.expired', 'tool.failed', 'model.requested']);
    expect(last(d)[1]).toMatchObject({
      data: {
        error: {
          code: 'approval.expired',
          message: `approval ap-c1 expired at ${later(40)} before anyone decided: the call was not made`,
        },
      },
    });
  });

  it('ignores an expiry of the run that arrives while it waits (the watchdog looked before the wait began)', () => {
    expect(last(waitingRun({ workingTimeSeconds: 5 }, expire(later(60))))).toEqual([]);
    // Once it works again past its budget, the same expiry fails it.
    const over = waitingRun({ workingTimeSeconds: 5 }, decision('granted', later(30)), expire(later(40)));
    expect(types(last(over))).toEqual(['run.failed']);
    expect(last(over)[0]).toMatchObject({ data: { budget: 'workingTime' } });
  });

  it('keeps judging runs requested with a wall-time budget by wall time, so an old log replays as decided', () => {
    const d = waitingRun({ wallTimeSeconds: 5 }, decision('granted', later(30)), {
      ...toolCompletes('r1', 1, 'c1'),
      at: later(31),
    });
    expect(types(last(d))).toEqual(['tool.completed', 'run.failed']);
    expect(last(d)[1]).toMatchObject({ data: { budget: 'wallTime' } });
  });
});
