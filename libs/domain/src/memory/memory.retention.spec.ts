import type { MemoryItem } from '@ratchet/contracts';
import { expiryOf, isExpired, namespaceWithin, refreshedExpiry, retentionFor } from './memory.retention';

const t0 = new Date('2026-01-01T00:00:00.000Z');

function item(overrides: Partial<MemoryItem>): MemoryItem {
  return {
    namespace: 'sessions/s1',
    key: 'k',
    value: 1,
    text: '1',
    owner: 'alice',
    provenance: {},
    createdAt: t0.toISOString(),
    updatedAt: t0.toISOString(),
    version: 1,
    refreshOnRead: true,
    ttlSeconds: 600,
    expiresAt: '2026-01-01T00:10:00.000Z',
    ...overrides,
  };
}

describe('namespace prefixes', () => {
  it.each([
    ['users/alice', 'users/alice', true],
    ['users/alice/prefs', 'users/alice', true],
    ['users/alice/prefs', 'users/alice/', true],
    ['users/alicex', 'users/alice', false],
    ['users', 'users/alice', false],
    ['anything/at/all', '', true],
  ])('%s within %s: %s', (namespace, prefix, expected) => {
    expect(namespaceWithin(namespace, prefix)).toBe(expected);
  });

  it('the most specific retention rule applies', () => {
    const policy = { 'sessions/': 3600, 'sessions/audit/': 86_400 };
    expect(retentionFor('sessions/s1', policy)).toBe(3600);
    expect(retentionFor('sessions/audit/x', policy)).toBe(86_400);
    expect(retentionFor('sessionsx', policy)).toBeUndefined();
  });
});

describe('expiry', () => {
  it('is the sooner of ttl and retention, or never without either', () => {
    expect(expiryOf(t0, 60, 3600)).toBe('2026-01-01T00:01:00.000Z');
    expect(expiryOf(t0, undefined, 3600)).toBe('2026-01-01T01:00:00.000Z');
    expect(expiryOf(t0, undefined, undefined)).toBeUndefined();
  });

  it('an item is expired from its expiry instant on', () => {
    const at = { expiresAt: '2026-01-01T00:10:00.000Z' };
    expect(isExpired(at, new Date('2026-01-01T00:09:59.999Z'))).toBe(false);
    expect(isExpired(at, new Date('2026-01-01T00:10:00.000Z'))).toBe(true);
    expect(isExpired({}, new Date('2099-01-01T00:00:00.000Z'))).toBe(false);
  });
});

describe('refresh on read', () => {
  const readAt = new Date('2026-01-01T00:05:00.000Z');

  it('given a refresh-on-read item, when read, then it expires ttl after the read', () => {
    expect(refreshedExpiry(item({}), readAt, {})).toBe('2026-01-01T00:15:00.000Z');
  });

  it('given an item that does not refresh, when read, then nothing changes', () => {
    expect(refreshedExpiry(item({ refreshOnRead: false }), readAt, {})).toBeUndefined();
  });

  it('given retention, when read near its end, then reading never keeps it past last write + retention', () => {
    expect(refreshedExpiry(item({}), readAt, { 'sessions/': 720 })).toBe('2026-01-01T00:12:00.000Z');
  });

  it('given retention already reached, when read, then the expiry is not moved (never shortened either)', () => {
    expect(refreshedExpiry(item({}), readAt, { 'sessions/': 300 })).toBeUndefined();
  });
});
