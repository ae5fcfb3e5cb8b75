import { foldEvents } from '../thread/thread.evolve';
import { initialThreadState, type ThreadState } from '../thread/thread.state';
import type { NewEvent, ThreadEvent } from '@ratchet/contracts';
import { watchdogAction, type RunCandidate } from './stalled-runs';

const T0 = '2026-11-30T10:00:00.000Z';
function stateOf(events: NewEvent[]): ThreadState {
  return foldEvents(
    initialThreadState(),
    events.map(
      (e, i) =>
        ({
          id: `e${i}`,
          v: 1,
          tenantId: 't',
          threadId: 'th',
          version: i + 1,
          at: T0,
          causationId: 'c',
          correlationId: 'c',
          ...e,
        }) as ThreadEvent,
    ),
  );
}
const started: NewEvent[] = [
  { type: 'thread.created', data: { createdBy: 'p' } },
  {
    type: 'run.requested',
    runId: 'r1',
    data: {
      requestId: 'q',
      agent: 'a',
      agentVersion: 1,
      maxSteps: 5,
      input: [{ role: 'user', content: 'x' }],
      principal: { id: 'p', roles: [] },
      concurrency: 'reject',
      metadata: {},
    },
  },
  { type: 'run.started', runId: 'r1', data: { requestId: 'q', maxSteps: 5 } },
  { type: 'model.requested', runId: 'r1', data: { step: 1, attempt: 1, commandId: 'm1' } },
];
const candidate = (events: NewEvent[], updatedAt = T0, modelCall?: RunCandidate['modelCall']): RunCandidate => ({
  tenantId: 't',
  threadId: 'th',
  version: events.length,
  runId: 'r1',
  startedAt: T0,
  updatedAt,
  state: stateOf(events),
  ...(modelCall ? { modelCall } : {}),
});
/** The run's model asks for one call, which is sent. */
const toTools: NewEvent[] = [
  {
    type: 'model.responded',
    runId: 'r1',
    data: {
      step: 1,
      commandId: 'm1',
      content: null,
      toolCalls: [{ id: 'c1', name: 'pay', args: {} }],
      usage: { inputTokens: 0, outputTokens: 0 },
      model: 'm',
    },
  },
  {
    type: 'tool.requested',
    runId: 'r1',
    data: { step: 1, callId: 'c1', tool: 'pay', args: {}, idempotencyKey: 'k' },
  },
];
/** …and the call waits for an approval instead. */
const toApproval: NewEvent[] = [
  ...toTools,
  {
    type: 'approval.requested',
    runId: 'r1',
    data: {
      step: 1,
      callId: 'c1',
      approvalId: 'ap',
      tool: 'pay',
      argsDigest: 'd',
      role: 'approver',
      expiresAt: T0,
      fourEyes: false,
    },
  },
];
const limits = { stepTimeoutMs: 60_000, runTimeoutMs: 3_600_000, lostAfterMs: 0 };
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000);

describe('watchdog decisions', () => {
  const leasedUntil = (seconds: number) => ({ sentAt: null, availableAt: at(seconds).toISOString(), leasedBy: 'w1' });

  it('leaves a run alone within its step budget', () => {
    expect(watchdogAction(candidate(started), limits, at(30), 'w')).toBeUndefined();
  });

  it('never re-issues a model call a live worker holds, however long it takes', () => {
    // The lease is renewed every few seconds while the call runs: at any time it ends in the future.
    for (const seconds of [61, 600, 3000]) {
      expect(
        watchdogAction(candidate(started, T0, leasedUntil(seconds + 10)), limits, at(seconds), 'w'),
      ).toBeUndefined();
    }
  });

  it('leaves a call alone that waits to be published, or to be taken off the bus within its limit', () => {
    const unsent = { sentAt: null, availableAt: null, leasedBy: null };
    expect(watchdogAction(candidate(started, T0, unsent), limits, at(600), 'w')).toBeUndefined();
    const queued = { sentAt: at(100).toISOString(), availableAt: null, leasedBy: null };
    expect(watchdogAction(candidate(started, T0, queued), limits, at(150), 'w')).toBeUndefined();
    // Queued behind busy workers for longer than a step budget is still no stall within `lostAfterMs`.
    expect(
      watchdogAction(candidate(started, T0, queued), { ...limits, lostAfterMs: 600_000 }, at(600), 'w'),
    ).toBeUndefined();
    expect(
      watchdogAction(candidate(started, T0, queued), { ...limits, lostAfterMs: 600_000 }, at(701), 'w'),
    ).toMatchObject({
      fence: { id: 'm1', idleMs: 600_000 },
    });
  });

  it('fences and re-issues a call nobody held or took for longer than a step budget', () => {
    const lost = { sentAt: at(0).toISOString(), availableAt: at(5).toISOString(), leasedBy: 'w1' };
    expect(watchdogAction(candidate(started, T0, lost), limits, at(70), 'w')).toEqual({
      command: expect.objectContaining({
        type: 'ResumeRun',
        runId: 'r1',
        fromVersion: 4,
        reason: expect.stringContaining('model call m1 is lost'),
      }),
      fence: { id: 'm1', idleMs: 60_000 },
    });
  });

  it('re-issues a call already fenced (the watchdog that fenced it stopped before it re-issued)', () => {
    const fenced = { sentAt: at(0).toISOString(), availableAt: 'infinity', leasedBy: 'w1' };
    expect(watchdogAction(candidate(started, T0, fenced), limits, at(1), 'w')).toMatchObject({
      command: { type: 'ResumeRun' },
      fence: { id: 'm1' },
    });
  });

  it('falls back to the thread idle time when the call has no row', () => {
    expect(watchdogAction(candidate(started), limits, at(61), 'w')).toMatchObject({
      command: { type: 'ResumeRun', reason: expect.stringContaining('no progress for 61 s') },
    });
  });

  it('expires a run past its run budget, even while its call is alive', () => {
    expect(
      watchdogAction(candidate(started, at(3599).toISOString(), leasedUntil(3700)), limits, at(3601), 'w'),
    ).toMatchObject({ command: { type: 'ExpireRun' } });
  });
  it('does not nudge a run that only waits for a human', () => {
    const waiting: NewEvent[] = [...started, ...toApproval];
    expect(watchdogAction(candidate(waiting), limits, at(600), 'w')).toBeUndefined();
  });

  it('never expires a run for its working time while it waits, and expires one that works past it', () => {
    const budgeted = (events: NewEvent[]): NewEvent[] =>
      events.map((e) =>
        e.type === 'run.requested' ? { ...e, data: { ...e.data, limits: { workingTimeSeconds: 5 } } } : e,
      );
    const waiting = budgeted([...started, ...toApproval]);
    // Days past its budget, waiting for a human: neither expired nor nudged.
    expect(watchdogAction(candidate(waiting), limits, at(3 * 86_400), 'w')).toBeUndefined();
    // Working (its model call alive) past 5 s of working time: expired, the reason names working time.
    expect(watchdogAction(candidate(budgeted(started), T0, leasedUntil(20)), limits, at(6), 'w')).toMatchObject({
      command: { type: 'ExpireRun', reason: expect.stringContaining('the run has worked 6 s') },
    });
  });

  it('re-sends the tool calls of a run with no result for a step budget', () => {
    const inTools: NewEvent[] = [...started, ...toTools];
    expect(watchdogAction(candidate(inTools), limits, at(30), 'w')).toBeUndefined();
    expect(watchdogAction(candidate(inTools), limits, at(61), 'w')).toEqual({
      command: expect.objectContaining({ type: 'ResumeRun' }),
    });
  });
});
