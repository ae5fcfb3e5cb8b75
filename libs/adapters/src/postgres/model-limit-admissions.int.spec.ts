import type { ProviderLimit } from '@ratchet/domain';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import { ModelLimitAdmissions } from './model-limit-admissions';
import type { Database } from './orm';
import { openServiceDatabase } from './service-database';

/*
 * Provider limits held in Postgres: several replicas (here three pools on the same schema) asking at
 * once see one window, in the order the limit's lock gives them.
 */
let testDb: TestDatabase;
const replicas: Database[] = [];
beforeAll(async () => {
  testDb = await createTestDatabase();
  for (let i = 0; i < 3; i++) replicas.push(await openServiceDatabase(testDb.url, 'orchestrator'));
});
afterAll(async () => {
  for (const db of replicas) await db.close();
  await testDb?.drop();
});

const OPTIONS = { guardMs: 200, concurrentRetryMs: 300 };
let n = 0;
const limitOf = (fields: Partial<ProviderLimit>): ProviderLimit => ({
  name: `limit-${++n}`,
  windowMs: 2_000,
  ...fields,
});
const call = (id: string, extra: { estimate?: number; tenantId?: string } = {}) => ({
  callId: id,
  tenantId: extra.tenantId ?? 'acme',
  estimate: extra.estimate ?? 10,
  maxDurationMs: 60_000,
});

it('admits at most the limit per window across replicas asking at once, and reserves the rest in order', async () => {
  const limit = limitOf({ requests: 4 });
  // Three tenants, so none of them holds a window's worth of reservations (see the fairness case below).
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      new ModelLimitAdmissions(replicas[i % 3]!, OPTIONS).acquire(limit, call(`c${i}`, { tenantId: `t${i % 3}` })),
    ),
  );
  const times = answers.map((a) => a.decision.at).sort((a, b) => a - b);
  expect(answers.filter((a) => a.decision.go)).toHaveLength(4);
  // Every window of the window's length plus the guard holds at most 4 admissions (reserved ones included).
  for (const t of times) expect(times.filter((u) => u >= t && u < t + 2_200).length).toBeLessThanOrEqual(4);
  expect(answers.filter((a) => !a.decision.go).every((a) => !a.decision.go && a.decision.reserve)).toBe(true);
});

it("serves another tenant's calls a window after a flood's, across replicas: a tenant holds a window's worth of reservations", async () => {
  const limit = limitOf({ requests: 3 });
  const flood = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      new ModelLimitAdmissions(replicas[i % 3]!, OPTIONS).acquire(limit, call(`f${i}`, { tenantId: 'flood' })),
    ),
  );
  const reserved = flood.filter((a) => !a.decision.go && a.decision.reserve).map((a) => a.decision.at);
  const shared = flood.filter((a) => !a.decision.go && a.decision.by === 'share');
  expect([flood.filter((a) => a.decision.go).length, reserved.length, shared.length]).toEqual([3, 3, 24]);
  // Those without a place ask again once the flood's last reservation is due, or a whole number of windows
  // later (a window's worth at a time, counted in each batch a replica decided together).
  for (const a of shared) {
    const later = a.decision.at - Math.max(...reserved);
    expect(later).toBeGreaterThanOrEqual(0);
    expect(Math.abs(later - Math.round(later / 2_200) * 2_200)).toBeLessThan(1);
  }
  const other = await new ModelLimitAdmissions(replicas[1]!, OPTIONS).acquire(limit, call('o1', { tenantId: 'other' }));
  expect(other.decision).toMatchObject({ go: false, reserve: true, by: 'requests' });
  // Right behind the flood's three reservations: the next window, not the flood's tenth.
  expect(other.decision.at).toBeGreaterThan(Math.max(...reserved));
  expect(other.decision.at).toBeLessThanOrEqual(Math.max(...reserved) + 2_200);
});

it('lets a reserved call go at its turn without deciding again, and not before', async () => {
  const limit = limitOf({ requests: 1 });
  const admissions = new ModelLimitAdmissions(replicas[0]!, OPTIONS);
  expect((await admissions.acquire(limit, call('first'))).decision.go).toBe(true);
  const waiting = await admissions.acquire(limit, call('second'));
  expect(waiting.decision).toMatchObject({ go: false, by: 'requests', reserve: true });
  // Asked again early: still its reserved time.
  expect((await admissions.acquire(limit, call('second'))).decision).toEqual(waiting.decision);
  await new Promise((r) => setTimeout(r, Math.max(0, waiting.decision.at - Date.now()) + 20));
  expect((await new ModelLimitAdmissions(replicas[1]!, OPTIONS).acquire(limit, call('second'))).decision.go).toBe(true);
  // A third asks after the second went: behind it by a whole window.
  const third = await admissions.acquire(limit, call('third'));
  expect(third.decision.at).toBeGreaterThanOrEqual(waiting.decision.at + 2_200);
});

it('bounds calls in flight and frees a slot when a call settles', async () => {
  const limit = limitOf({ concurrent: 2 });
  const admissions = new ModelLimitAdmissions(replicas[0]!, OPTIONS);
  const a = await admissions.acquire(limit, call('a'));
  await admissions.acquire(limit, call('b'));
  expect((await admissions.acquire(limit, call('c'))).decision).toMatchObject({
    go: false,
    by: 'concurrent',
    reserve: false,
  });
  await admissions.settle(limit.name, a.admissionId, 12);
  expect((await admissions.acquire(limit, call('c'))).decision.go).toBe(true);
});

it('counts the tokens a call reported when it settles, in place of its estimate', async () => {
  const limit = limitOf({ tokens: 1_000 });
  const admissions = new ModelLimitAdmissions(replicas[0]!, OPTIONS);
  const a = await admissions.acquire(limit, call('a', { estimate: 900 }));
  expect(a.decision.go).toBe(true);
  await admissions.settle(limit.name, a.admissionId, 100);
  // 100 reported + 800 fits the 1,000; on the estimate (900) it would not have.
  expect((await admissions.acquire(limit, call('b', { estimate: 800 }))).decision.go).toBe(true);
  expect((await admissions.acquire(limit, call('c', { estimate: 200 }))).decision).toMatchObject({
    go: false,
    by: 'tokens',
  });
});

it('asks a call that went once again under a new id: both requests count in the window', async () => {
  const limit = limitOf({ requests: 2 });
  const admissions = new ModelLimitAdmissions(replicas[0]!, OPTIONS);
  const first = await admissions.acquire(limit, call('x'));
  const again = await admissions.acquire(limit, call('x'));
  expect(first.decision.go && again.decision.go).toBe(true);
  expect(again.admissionId).not.toBe(first.admissionId);
  expect((await admissions.acquire(limit, call('y'))).decision.go).toBe(false);
});

it('decides the calls one process asks at once together, in the order they asked, within the limit', async () => {
  const limit = limitOf({ requests: 3, concurrent: 10 });
  const admissions = new ModelLimitAdmissions(replicas[0]!, OPTIONS);
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => admissions.acquire(limit, call(`b${i}`, { tenantId: `t${i % 2}` }))),
  );
  expect(answers.map((a) => a.decision.go)).toEqual([true, true, true, ...Array.from({ length: 7 }, () => false)]);
  // Admitted and reserved ones (a call past its tenant's share holds no place: it asks again).
  const times = answers.filter((a) => a.decision.go || a.decision.reserve).map((a) => a.decision.at);
  expect(times.length).toBeGreaterThanOrEqual(9);
  expect([...times].sort((a, b) => a - b)).toEqual(times);
  for (const t of times) expect(times.filter((u) => u >= t && u < t + 2_200).length).toBeLessThanOrEqual(3);
});

it('keeps the reservation of a call asked again after it went: it waits once, then goes under that reservation', async () => {
  const limit = limitOf({ requests: 1 });
  const admissions = new ModelLimitAdmissions(replicas[0]!, OPTIONS);
  expect((await admissions.acquire(limit, call('r'))).decision.go).toBe(true);
  // The provider answered 429, the call asks again: the window is full, so it is reserved a turn, once.
  const first = await admissions.acquire(limit, call('r'));
  expect(first.decision).toMatchObject({ go: false, reserve: true });
  expect((await admissions.acquire(limit, call('r'))).decision).toEqual(first.decision);
  await new Promise((r) => setTimeout(r, Math.max(0, first.decision.at - Date.now()) + 20));
  const went = await admissions.acquire(limit, call('r'));
  expect(went).toEqual({ decision: { go: true, at: expect.any(Number) }, admissionId: first.admissionId });
});
