import { initialThreadState } from '@ratchet/domain';
import { ThreadCache } from './thread-cache';

const state = initialThreadState();
const user = (content: string) => ({ role: 'user' as const, content });

describe('thread cache', () => {
  it('keeps the most recently used threads and drops the least recently used first', () => {
    const cache = new ThreadCache(2, 10);
    cache.set('t', 'a', { version: 1, state });
    cache.set('t', 'b', { version: 2, state });
    expect(cache.get('t', 'a')?.version).toBe(1); // a is now the most recent
    cache.set('t', 'c', { version: 3, state });
    expect(cache.get('t', 'b')).toBeUndefined();
    expect(cache.get('t', 'a')?.version).toBe(1);
    expect(cache.get('t', 'c')?.version).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('keys threads by tenant too, replaces an entry on set and forgets it on delete', () => {
    const cache = new ThreadCache(10, 10);
    cache.set('t1', 'a', { version: 1, state });
    cache.set('t2', 'a', { version: 7, state });
    cache.set('t1', 'a', { version: 2, state });
    expect(cache.get('t1', 'a')?.version).toBe(2);
    expect(cache.get('t2', 'a')?.version).toBe(7);
    cache.delete('t1', 'a');
    expect(cache.get('t1', 'a')).toBeUndefined();
    expect(cache.get('t2', 'a')?.version).toBe(7);
  });

  it('keeps a conversation only up to its message limit, and caches nothing when sized 0', () => {
    const cache = new ThreadCache(10, 2);
    cache.set('t', 'short', { version: 1, state, transcript: [user('a'), user('b')] });
    cache.set('t', 'long', { version: 1, state, transcript: [user('a'), user('b'), user('c')] });
    expect(cache.get('t', 'short')?.transcript).toHaveLength(2);
    expect(cache.get('t', 'long')?.transcript).toBeUndefined();
    expect(cache.get('t', 'long')?.version).toBe(1);
    const off = new ThreadCache(0, 2);
    off.set('t', 'a', { version: 1, state });
    expect(off.get('t', 'a')).toBeUndefined();
  });
});
