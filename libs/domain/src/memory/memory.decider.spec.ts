import type { MemoryItem, MemoryPutRequest, Principal } from '@ratchet/contracts';
import { decideDelete, decideForget, decideGet, decidePut, type MemoryRules } from './memory.decider';
import { DEFAULT_MEMORY_LIMITS } from './memory.limits';

const alice: Principal = { id: 'alice', roles: [] };
const bob: Principal = { id: 'bob', roles: [] };
const admin: Principal = { id: 'ops', roles: ['admin'] };
const rules: MemoryRules = { limits: DEFAULT_MEMORY_LIMITS, retention: { 'sessions/': 3600 } };
const t0 = new Date('2026-01-01T00:00:00.000Z');
const later = new Date('2026-01-01T00:10:00.000Z');

function put(overrides: Partial<MemoryPutRequest> = {}): MemoryPutRequest {
  return {
    principal: alice,
    namespace: 'users/alice/preferences',
    key: 'theme',
    value: { theme: 'dark' },
    provenance: { threadId: 'th-1' },
    refreshOnRead: false,
    ...overrides,
  };
}

/** Given: the item a previous put stored. */
function stored(overrides: Partial<MemoryPutRequest> = {}, at = t0): MemoryItem {
  const decision = decidePut(undefined, put(overrides), at, rules);
  if (!decision.ok) throw new Error(decision.error.message);
  return decision.item;
}

describe('memory put', () => {
  it('given nothing stored, when alice puts, then a version-1 item owned by her is inserted', () => {
    const decision = decidePut(undefined, put(), t0, rules);
    expect(decision).toEqual({
      ok: true,
      guard: { mode: 'insert' },
      item: expect.objectContaining({
        owner: 'alice',
        version: 1,
        createdAt: t0.toISOString(),
        updatedAt: t0.toISOString(),
        text: 'theme dark',
        provenance: { threadId: 'th-1' },
      }),
    });
  });

  it('given an item, when its owner puts again, then it is updated guarded by the version read', () => {
    const decision = decidePut(stored(), put({ value: 'light' }), later, rules);
    expect(decision).toMatchObject({
      ok: true,
      guard: { mode: 'update', whereVersion: 1 },
      item: { version: 2, createdAt: t0.toISOString(), updatedAt: later.toISOString(), value: 'light' },
    });
  });

  it("given alice's item, when bob puts, then it is forbidden", () => {
    expect(decidePut(stored(), put({ principal: bob }), later, rules)).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
  });

  it("given alice's item, when an admin puts, then it is updated and still alice's", () => {
    expect(decidePut(stored(), put({ principal: admin }), later, rules)).toMatchObject({
      ok: true,
      item: { owner: 'alice', version: 2 },
    });
  });

  it('given an item at version 1, when a put expects version 2, then it is a version conflict', () => {
    expect(decidePut(stored(), put({ expectedVersion: 2 }), later, rules)).toMatchObject({
      ok: false,
      error: { code: 'version_conflict' },
    });
  });

  it('given an item, when a put expects version 0 (create only), then it is a version conflict', () => {
    expect(decidePut(stored(), put({ expectedVersion: 0 }), later, rules)).toMatchObject({
      error: { code: 'version_conflict' },
    });
  });

  it('given nothing stored, when a put expects version 0, then it is inserted', () => {
    expect(decidePut(undefined, put({ expectedVersion: 0 }), t0, rules)).toMatchObject({ ok: true });
  });

  it("given bob's expired item, when alice puts, then she replaces it with a new version-1 item of her own", () => {
    const old = stored({ principal: bob, namespace: 'notes/shared', ttlSeconds: 60 });
    const decision = decidePut(old, put({ namespace: 'notes/shared' }), later, rules);
    expect(decision).toMatchObject({
      ok: true,
      guard: { mode: 'replace-expired', whereVersion: 1 },
      item: { owner: 'alice', version: 1, createdAt: later.toISOString() },
    });
  });

  it('when the value is too large, then too_large names the field and the limit', () => {
    const decision = decidePut(undefined, put({ value: 'x'.repeat(70_000) }), t0, rules);
    expect(decision).toMatchObject({ ok: false, error: { code: 'too_large', field: 'value', limit: 65_536 } });
  });

  it('when no text is given, then a long flattened value is truncated to the text limit, not refused', () => {
    const words = Array.from({ length: 5000 }, (_, i) => `word${i}`);
    const decision = decidePut(undefined, put({ value: words }), t0, rules);
    expect(decision.ok && decision.item.text.length).toBeLessThanOrEqual(DEFAULT_MEMORY_LIMITS.maxTextBytes);
  });

  it('when a ttl is given, then the item expires ttl seconds after the write', () => {
    expect(decidePut(undefined, put({ ttlSeconds: 30 }), t0, rules)).toMatchObject({
      item: { expiresAt: '2026-01-01T00:00:30.000Z', ttlSeconds: 30 },
    });
  });

  it('when a namespace has retention shorter than the ttl, then retention wins', () => {
    expect(decidePut(undefined, put({ namespace: 'sessions/s1', ttlSeconds: 86_400 }), t0, rules)).toMatchObject({
      item: { expiresAt: '2026-01-01T01:00:00.000Z' },
    });
  });
});

describe('memory get', () => {
  it('given an item, when its owner reads it, then it comes back unchanged', () => {
    const item = stored();
    expect(decideGet(item, { principal: alice, namespace: item.namespace, key: item.key }, later, rules)).toEqual({
      ok: true,
      item,
      refreshed: false,
    });
  });

  it("given alice's item in her tree, when bob reads it, then forbidden by the namespace; an admin reads it", () => {
    const item = stored();
    expect(decideGet(item, { principal: bob, namespace: item.namespace, key: item.key }, later, rules)).toMatchObject({
      ok: false,
      error: { code: 'forbidden', message: expect.stringContaining('users/alice/preferences') },
    });
    expect(decideGet(item, { principal: admin, namespace: item.namespace, key: item.key }, later, rules)).toMatchObject(
      {
        ok: true,
      },
    );
  });

  it("given alice's item outside the shared trees, when bob reads it, then it is not found (its existence is not revealed)", () => {
    const item = stored({ namespace: 'notes/alice' });
    expect(decideGet(item, { principal: bob, namespace: item.namespace, key: item.key }, later, rules)).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    const about = stored({ namespace: 'notes/alice', subject: 'bob' });
    expect(
      decideGet(about, { principal: bob, namespace: about.namespace, key: about.key }, later, rules),
    ).toMatchObject({
      ok: true,
    });
  });

  it('given an expired item, when read, then it is not found', () => {
    const item = stored({ ttlSeconds: 60 });
    expect(decideGet(item, { principal: alice, namespace: item.namespace, key: item.key }, later, rules)).toMatchObject(
      { ok: false, error: { code: 'not_found' } },
    );
  });

  it('given a refresh-on-read item, when read, then its expiry moves to now + ttl', () => {
    const item = stored({ ttlSeconds: 900, refreshOnRead: true });
    expect(decideGet(item, { principal: alice, namespace: item.namespace, key: item.key }, later, rules)).toMatchObject(
      { ok: true, refreshed: true, item: { expiresAt: '2026-01-01T00:25:00.000Z' } },
    );
  });
});

describe('memory delete', () => {
  const req = (principal: Principal, expectedVersion?: number) => ({
    principal,
    namespace: 'users/alice/preferences',
    key: 'theme',
    ...(expectedVersion === undefined ? {} : { expectedVersion }),
  });

  it('given nothing stored, when deleted, then not found', () => {
    expect(decideDelete(undefined, req(alice), t0)).toMatchObject({ error: { code: 'not_found' } });
  });

  it("given alice's item, when bob deletes, then forbidden; when an admin deletes, then allowed", () => {
    expect(decideDelete(stored(), req(bob), later)).toMatchObject({ error: { code: 'forbidden' } });
    expect(decideDelete(stored(), req(admin), later)).toEqual({ ok: true, whereVersion: 1 });
  });

  it('given an item at version 1, when a delete expects version 3, then it is a version conflict', () => {
    expect(decideDelete(stored(), req(alice, 3), later)).toMatchObject({ error: { code: 'version_conflict' } });
  });
});

describe('memory forget-subject', () => {
  it('a subject may erase itself, an admin anyone, nobody else anyone', () => {
    expect(decideForget({ principal: alice, subject: 'alice' })).toEqual({ ok: true });
    expect(decideForget({ principal: admin, subject: 'alice' })).toEqual({ ok: true });
    expect(decideForget({ principal: bob, subject: 'alice' })).toMatchObject({ error: { code: 'forbidden' } });
  });
});
