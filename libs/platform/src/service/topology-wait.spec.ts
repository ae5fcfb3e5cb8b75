import { TopologyError } from '@ratchet/adapters';
import { isApiTimeout } from './topology-wait';

describe('isApiTimeout: what a starting service waits for', () => {
  it('given a JetStream API request that timed out, wrapped by the topology code, waits', () => {
    const timeout = Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' });
    expect(isApiTimeout(new TopologyError('reading stream X_EVENTS: TIMEOUT', { cause: timeout }))).toBe(true);
    expect(isApiTimeout(timeout)).toBe(true);
  });

  it('given JetStream not enabled, a permissions error or a plain failure, does not wait', () => {
    const noResponders = Object.assign(new Error('503'), { code: '503' });
    expect(isApiTimeout(new TopologyError('JetStream is not enabled', { cause: noResponders }))).toBe(false);
    expect(isApiTimeout(Object.assign(new Error('Permissions Violation'), { code: 'PERMISSIONS_VIOLATION' }))).toBe(
      false,
    );
    expect(isApiTimeout(new Error('stream retention cannot change'))).toBe(false);
    expect(isApiTimeout(undefined)).toBe(false);
  });
});
