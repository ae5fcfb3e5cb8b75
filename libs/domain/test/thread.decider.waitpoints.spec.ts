import type { NewEvent } from '@ratchet/contracts';
import type { RecordToolResult, RecordWaitpointDecision } from '../src';
import { waitOf } from '../src';
import { AT, run } from './decider.specification';
import { call, modelAnswers, requestRun, toolCompletes } from './fixtures';

const types = (events: NewEvent[]) => events.map((e) => e.type);
const later = (seconds: number) => new Date(Date.parse(AT) + seconds * 1000).toISOString();
const waiting = (onExpiry: 'tool_error' | 'fail_run' = 'tool_error'): RecordToolResult => ({
  ...toolCompletes('r1', 1, 'c1'),
  at: later(1),
  outcome: { status: 'waiting', waitpoint: { id: 'wpt_1', expiresAt: later(3600), onExpiry } },
});
const decided = (decision: RecordWaitpointDecision['decision'], waitpointId = 'wpt_1'): RecordWaitpointDecision => ({
  type: 'RecordWaitpointDecision',
  tenantId: toolCompletes('r1', 1, 'c1').tenantId,
  threadId: toolCompletes('r1', 1, 'c1').threadId,
  at: later(7200),
  runId: 'r1',
  callId: 'c1',
  waitpointId,
  decision,
  by: 'key:ci',
});
const last = (r: ReturnType<typeof run>) => r.decisions.at(-1)?.events ?? [];
const lastOut = (r: ReturnType<typeof run>) => r.decisions.at(-1)?.outgoing ?? [];
const start = [requestRun('r1', { limits: { workingTimeSeconds: 5 } }), modelAnswers('r1', 1, [call('c1')], null)];

describe('waitpoints: a run waits for the outside world', () => {
  it('records the waitpoint a call opened, asks the approvals service to keep it, and waits (a named wait)', () => {
    const r = run([...start, waiting()]);
    expect(types(last(r))).toEqual(['waitpoint.created']);
    expect(lastOut(r)).toEqual([
      expect.objectContaining({
        kind: 'waitpoint.request',
        callId: 'c1',
        waitpoint: expect.objectContaining({ id: 'wpt_1' }),
      }),
    ]);
    expect(r.state.active?.calls[0]).toMatchObject({
      status: 'awaiting_waitpoint',
      waitpoint: { waitpointId: 'wpt_1' },
    });
    expect(waitOf(r.state.active!)).toEqual({ on: 'waitpoint', until: later(3600) });
    expect(r.state.active?.waiting).toMatchObject({ on: 'waitpoint', since: later(1) });
  });

  it('goes on with the completion as the tool result, in the same decision, with its wait left out of working time', () => {
    const r = run([...start, waiting(), decided({ status: 'completed', result: { build: 'green' } })]);
    expect(types(last(r))).toEqual(['waitpoint.completed', 'tool.completed', 'model.requested']);
    expect(last(r)[1]).toMatchObject({ data: { callId: 'c1', result: { build: 'green' } } });
    expect(r.state.active?.waitedMs).toBe(7199_000);
  });

  it('records the same completion again, or one for another waitpoint, as ignored: no second continuation', () => {
    const twice = run([
      ...start,
      waiting(),
      decided({ status: 'completed', result: 1 }),
      decided({ status: 'completed', result: 1 }),
    ]);
    expect(types(last(twice))).toEqual(['result.ignored']);
    const stale = run([...start, waiting(), decided({ status: 'completed', result: 1 }, 'wpt_other')]);
    expect(types(last(stale))).toEqual(['result.ignored']);
    expect(stale.state.active?.calls[0]?.status).toBe('awaiting_waitpoint');
  });

  it('on expiry tells the model (tool_error) or fails the run (fail_run), naming the waitpoint', () => {
    const told = run([...start, waiting('tool_error'), decided({ status: 'expired' })]);
    expect(types(last(told))).toEqual(['waitpoint.expired', 'tool.failed', 'model.requested']);
    expect(last(told)[1]).toMatchObject({
      data: { error: { code: 'waitpoint.expired', message: expect.stringContaining('wpt_1') } },
    });
    const failed = run([...start, waiting('fail_run'), decided({ status: 'expired' })]);
    expect(types(last(failed))).toEqual(['waitpoint.expired', 'tool.failed', 'run.failed']);
    expect(lastOut(failed)).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'run.stop', humans: true })]),
    );
  });

  it('a failed waitpoint is the tool error the model sees', () => {
    const r = run([
      ...start,
      waiting(),
      decided({ status: 'failed', error: { code: 'ci.failed', message: 'build 42 failed', retryable: true } }),
    ]);
    expect(types(last(r))).toEqual(['waitpoint.failed', 'tool.failed', 'model.requested']);
    expect(last(r)[1]).toMatchObject({ data: { error: { code: 'ci.failed', retryable: false } } });
  });
});
