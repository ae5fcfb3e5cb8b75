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
