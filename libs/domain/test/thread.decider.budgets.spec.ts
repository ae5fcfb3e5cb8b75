import type { NewEvent } from '@ratchet/contracts';
import type { RecordModelResult } from '../src';
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
