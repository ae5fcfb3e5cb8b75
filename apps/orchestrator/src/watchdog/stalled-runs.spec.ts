import { foldEvents, initialThreadState, type ThreadState } from '@ratchet/domain';
import type { NewEvent, ThreadEvent } from '@ratchet/contracts';
import { watchdogCommand, type RunCandidate } from './stalled-runs';

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
const candidate = (events: NewEvent[], updatedAt = T0): RunCandidate => ({
  tenantId: 't',
  threadId: 'th',
  version: events.length,
  runId: 'r1',
  startedAt: T0,
  updatedAt,
  state: stateOf(events),
});
const limits = { stepTimeoutMs: 60_000, runTimeoutMs: 3_600_000 };
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000);

describe('watchdog decisions', () => {
  it('leaves a run alone within its step budget', () => {
    expect(watchdogCommand(candidate(started), limits, at(30), 'w')).toBeUndefined();
  });

  it('nudges a run idle past its step budget', () => {
    expect(watchdogCommand(candidate(started), limits, at(61), 'w')).toMatchObject({
      type: 'ResumeRun',
      runId: 'r1',
      fromVersion: 4,
      reason: expect.stringContaining('no progress for 61 s'),
    });
  });

  it('expires a run past its run budget', () => {
    expect(watchdogCommand(candidate(started, at(3599).toISOString()), limits, at(3601), 'w')).toMatchObject({
      type: 'ExpireRun',
    });
  });

  it('does not nudge a run that only waits for a human', () => {
    const waiting: NewEvent[] = [
      ...started,
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
    expect(watchdogCommand(candidate(waiting), limits, at(600), 'w')).toBeUndefined();
  });
});
