import { decideErasure } from './thread-erasure.rule';

describe('erasing a thread', () => {
  it('erases an idle thread', () => {
    expect(decideErasure({ thread: { status: 'idle' }, activeRuns: 0, tombstone: false })).toBe('erase');
  });

  it('refuses while a run is going, whatever the projection says', () => {
    expect(decideErasure({ thread: { status: 'running' }, activeRuns: 1, tombstone: false })).toBe('busy');
    expect(decideErasure({ thread: { status: 'queued' }, activeRuns: 0, tombstone: false })).toBe('busy');
    expect(decideErasure({ thread: { status: 'idle' }, activeRuns: 1, tombstone: false })).toBe('busy');
    expect(decideErasure({ thread: undefined, activeRuns: 1, tombstone: false })).toBe('busy');
  });

  it('answers an erasure repeated as done, and an unknown thread as not found', () => {
    expect(decideErasure({ thread: undefined, activeRuns: 0, tombstone: true })).toBe('already');
    expect(decideErasure({ thread: undefined, activeRuns: 0, tombstone: false })).toBe('not-found');
  });

  it('erases a thread recreated after an earlier erasure of the same id', () => {
    expect(decideErasure({ thread: { status: 'idle' }, activeRuns: 0, tombstone: true })).toBe('erase');
  });
});
