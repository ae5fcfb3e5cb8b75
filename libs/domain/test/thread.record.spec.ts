import {
  foldEvents,
  foldRecord,
  initialThreadState,
  recordFrom,
  recordOfSnapshot,
  runRowsOf,
  snapshotStateOf,
  type SnapshotState,
} from '../src';
import { envelop, run, TENANT, THREAD } from './decider.specification';
import { call, modelAnswers, requestRun, toolCompletes } from './fixtures';

describe('thread record', () => {
  const history = envelop(
    run([
      requestRun('r1'),
      modelAnswers('r1', 1, [call('a')], null),
      toolCompletes('r1', 1, 'a'),
      requestRun('r2', { concurrency: 'enqueue', input: [{ role: 'user', content: 'next' }] }),
      modelAnswers('r1', 2, [], 'first'),
      modelAnswers('r2', 1, [call('b')], null),
    ]).events,
  );

  it('folds the same state as the decider fold, with the conversation and every run beside it', () => {
    const record = foldRecord(recordFrom(), history);
    expect(record.state).toEqual(foldEvents(initialThreadState(), history));
    expect(record.transcript.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(runRowsOf(TENANT, THREAD, record).map((r) => [r.runId, r.status, r.steps])).toEqual([
      ['r1', 'completed', 2],
      ['r2', 'running', 1],
    ]);
  });

  it('continues from a snapshot as from the events it replaced', () => {
    const whole = foldRecord(recordFrom(), history);
    const head = foldRecord(recordFrom(), history.slice(0, 5));
    const resumed = foldRecord(recordOfSnapshot(snapshotStateOf(head), head.runVersions), history.slice(5));
    expect(resumed).toEqual(whole);
  });

  it('reads a snapshot written before the state was bounded (transcript and runs inside the state)', () => {
    const head = foldRecord(recordFrom(), history.slice(0, 9)); // r1 active, r2 queued
    expect(head.state.active?.runId).toBe('r1');
    const { messages: _m, lastAssistant: _l, ...legacy } = snapshotStateOf(head);
    const { startedAt: _s, answered: _a, ...legacyActive } = legacy.active!;
    const old = { ...legacy, active: legacyActive } as unknown as SnapshotState;
    expect(recordOfSnapshot(old, head.runVersions)).toEqual(head);
  });
});
