import type { RecordModelWait } from '../src';
import { modelCommandId, workingMs } from '../src';
import { AT, given, run } from './decider.specification';
import { call, modelAnswers, requestRun } from './fixtures';

const later = (seconds: number) => new Date(Date.parse(AT) + seconds * 1000).toISOString();
const waits = (commandId: string, until: string, extra: Partial<RecordModelWait> = {}): RecordModelWait => ({
  type: 'RecordModelWait',
  tenantId: 'acme',
  threadId: 'th-1',
  at: AT,
  runId: 'r1',
  commandId,
  step: 1,
  limit: 'openai',
  bound: 'requests',
  until,
  ...extra,
});

describe('model calls waiting for a provider limit', () => {
  it('commands the same attempt again for when the limit has room, as a new command held back until then', () => {
    const history = run([requestRun('r1')]).events;
    const d = given(history).when(waits(modelCommandId('r1', 1, 1), later(30)));
    expect(d.events).toEqual([
      {
        type: 'model.requested',
        runId: 'r1',
        data: {
          step: 1,
          attempt: 1,
          commandId: `${modelCommandId('r1', 1, 1)}:wait:1`,
          retryReason: `waiting for the provider limit openai (requests per window) until ${later(30)}`,
          notBefore: later(30),
          waitFor: { limit: 'openai', bound: 'requests' },
        },
      },
    ]);
    expect(d.outgoing).toEqual([
      expect.objectContaining({
        kind: 'model.call',
        attempt: 1,
        commandId: `${modelCommandId('r1', 1, 1)}:wait:1`,
        notBefore: later(30),
      }),
    ]);
  });

  it('spends no model call of the budget and no working time on the wait', () => {
    const history = run([requestRun('r1', { limits: { modelCalls: 1, workingTimeSeconds: 10 } })]).events;
    const d = given(history).when(waits(modelCommandId('r1', 1, 1), later(600)));
    expect(d.after.active?.spent?.modelCalls).toBe(1);
    // Ten minutes of waiting later, the run has worked for none of them; its one model call still comes.
    expect(workingMs(d.after.active!, later(600))).toBe(0);
    const answered = given([...history, ...d.events]).when({
      ...modelAnswers('r1', 1, [], 'done'),
      commandId: `${modelCommandId('r1', 1, 1)}:wait:1`,
      at: later(601),
    });
    expect(answered.events.map((e) => e.type)).toEqual(['model.responded', 'run.completed']);
  });

  it('numbers each further wait of the attempt, and takes answers only for the current command', () => {
    const first = run([requestRun('r1'), waits(modelCommandId('r1', 1, 1), later(5))]);
    const second = given(first.events).when(
      waits(`${modelCommandId('r1', 1, 1)}:wait:1`, later(9), { bound: 'concurrent' }),
    );
    expect(second.events[0]).toMatchObject({
      data: {
        commandId: `${modelCommandId('r1', 1, 1)}:wait:2`,
        retryReason: expect.stringContaining('calls at once'),
      },
    });
    // The answer of the command it replaced is a stale result, recorded as ignored.
    const stale = given([...first.events, ...second.events]).when(modelAnswers('r1', 1, [call('c1')]));
    expect(stale.events.map((e) => e.type)).toEqual(['result.ignored']);
  });

  it("names a wait for its tenant's share of the limit as such: the tenant holds a window's worth of calls reserved", () => {
    const d = given(run([requestRun('r1')]).events).when(
      waits(modelCommandId('r1', 1, 1), later(60), { bound: 'share' }),
    );
    expect(d.events[0]).toMatchObject({
      type: 'model.requested',
      data: {
        attempt: 1,
        waitFor: { limit: 'openai', bound: 'share' },
        retryReason: `waiting for the provider limit openai (its tenant's share: a window's worth of its calls reserved) until ${later(60)}`,
      },
    });
  });

  it('ignores a wait for a call the run no longer makes', () => {
    const history = run([requestRun('r1'), modelAnswers('r1', 1, [], 'done')]).events;
    const d = given(history).when(waits(modelCommandId('r1', 1, 1), later(5)));
    expect(d.events).toEqual([
      expect.objectContaining({ type: 'result.ignored', data: expect.objectContaining({ kind: 'model.wait' }) }),
    ]);
  });

  it('counts a wait answered by a worker that took over from a dead one as that attempt (it may have asked)', () => {
    const history = run([requestRun('r1')]).events;
    const d = given(history).when(waits(modelCommandId('r1', 1, 1), later(5), { delivery: 2, worker: 'w2' }));
    expect(d.events.map((e) => (e.data as { attempt?: number }).attempt)).toEqual([2, 2]);
    expect(d.after.active?.spent?.modelCalls).toBe(2);
  });
});

describe("the provider's 429s, waited out", () => {
  const rateLimited = (commandId: string, retryAfterMs: number | undefined, at = AT) => ({
    ...modelAnswers('r1', 1),
    commandId,
    at,
    limit: 'openai',
    outcome: {
      status: 'error' as const,
      error: { code: 'rate_limited', message: 'HTTP 429: slow down', retryable: true, retryAfterMs },
    },
  });

  it('given budget left, when the provider answers 429, then the same attempt waits at least its Retry-After, not counted as an attempt or a model call', () => {
    const history = run([requestRun('r1', { limits: { rateLimitWaitSeconds: 60, modelAttempts: 3 } })]).events;
    const d = given(history).when(rateLimited(modelCommandId('r1', 1, 1), 20_000));
    expect(d.events).toHaveLength(1);
    const data = d.events[0]!.data as { attempt: number; notBefore: string; waitFor: unknown; retryReason: string };
    expect(data).toMatchObject({
      attempt: 1,
      commandId: `${modelCommandId('r1', 1, 1)}:wait:1`,
      waitFor: { limit: 'openai', bound: 'rate_limited' },
      retryReason: expect.stringContaining('the provider (limit openai) answered 429'),
    });
    const waitMs = Date.parse(data.notBefore) - Date.parse(AT);
    expect(waitMs).toBeGreaterThanOrEqual(20_000);
    expect(waitMs).toBeLessThanOrEqual(22_000);
    expect(d.after.active?.spent?.modelCalls).toBe(1);
    expect(d.after.active?.rateLimitedMs).toBe(waitMs);
    expect(workingMs(d.after.active!, data.notBefore)).toBe(0);
  });

  it('given a storm longer than the attempts, when each 429 fits the budget, then the run keeps waiting and its answer completes it', () => {
    let history = run([requestRun('r1', { limits: { rateLimitWaitSeconds: 600, modelAttempts: 3 } })]).events;
    let commandId = modelCommandId('r1', 1, 1);
    let at = AT;
    for (let i = 0; i < 8; i++) {
      const d = given(history).when(rateLimited(commandId, 1_000, at));
      expect(d.events.map((e) => e.type)).toEqual(['model.requested']);
      history = [...history, ...d.events];
      commandId = (d.events[0]!.data as { commandId: string }).commandId;
      at = (d.events[0]!.data as { notBefore: string }).notBefore;
    }
    const done = given(history).when({ ...modelAnswers('r1', 1, [], 'made it'), commandId, at });
    expect(done.events.map((e) => e.type)).toEqual(['model.responded', 'run.completed']);
  });

  it('given the budget spent, when the provider answers 429 again, then the run fails with model.rate_limited naming the limit and the budget', () => {
    const history = run([
      requestRun('r1', { limits: { rateLimitWaitSeconds: 30 } }),
      rateLimited(modelCommandId('r1', 1, 1), 20_000),
    ]).events;
    const d = given(history).when(rateLimited(`${modelCommandId('r1', 1, 1)}:wait:1`, 20_000, later(21)));
    expect(d.events.map((e) => e.type)).toEqual(['run.failed']);
    expect(d.events[0]!.data).toMatchObject({
      error: {
        code: 'model.rate_limited',
        message: expect.stringMatching(
          /^step 1: the provider \(limit openai\) kept answering 429 .*rate-limit wait budget of 30 s; last error: HTTP 429: slow down$/,
        ),
      },
    });
  });

  it('given a run requested before the budget existed, when the provider answers 429, then it is an attempt as before', () => {
    const history = run([requestRun('r1', { limits: { modelAttempts: 3 } })]).events;
    const d = given(history).when(rateLimited(modelCommandId('r1', 1, 1), 1_000));
    expect(d.events[0]!.data).toMatchObject({ attempt: 2, commandId: modelCommandId('r1', 1, 2) });
  });
});
