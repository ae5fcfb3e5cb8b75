import { createTestDatabase, newThreadRef, type TestDatabase } from '@ratchet/testing';
import { ApprovalsRepository, type NewApproval } from './approvals.repository';
import type { Database } from './orm';
import { openServiceDatabase } from './service-database';

let testDb: TestDatabase;
let approvals: Database;
beforeAll(async () => {
  testDb = await createTestDatabase();
  approvals = await openServiceDatabase(testDb.url, 'approvals');
});
afterAll(async () => {
  await approvals?.close();
  await testDb.drop();
});

const approval = (tenantId: string, id: string, traceparent?: string): NewApproval => ({
  ...newThreadRef(),
  tenantId,
  id,
  kind: 'tool',
  runId: 'run-1',
  step: 1,
  callId: 'call-1',
  agent: 'pay',
  tool: 'demo.effect.charge',
  args: { amount: 500 },
  argsDigest: 'sha256:x',
  role: 'approver',
  fourEyes: false,
  requestedBy: 'alice',
  requestedByRoles: ['runner'],
  idempotencyKey: null,
  reason: null,
  expiresAt: null,
  ...(traceparent ? { traceparent } : {}),
});

describe('ApprovalsRepository', () => {
  it('keeps the trace context a request arrived with (none when it came without one)', async () => {
    const repo = new ApprovalsRepository(approvals.sql);
    const traceparent = `00-${'2'.repeat(32)}-${'c'.repeat(16)}-01`;
    expect(await repo.insert(approval('t-trace', 'apr_1', traceparent))).toBe(true);
    expect(await repo.insert(approval('t-trace', 'apr_2'))).toBe(true);
    expect((await repo.get('t-trace', 'apr_1'))?.traceparent).toBe(traceparent);
    expect((await repo.get('t-trace', 'apr_2'))?.traceparent).toBeNull();
  });

  it('counts pending approvals per tenant', async () => {
    const repo = new ApprovalsRepository(approvals.sql);
    await repo.insert(approval('t-a', 'apr_1'));
    await repo.insert(approval('t-a', 'apr_2'));
    await repo.insert(approval('t-b', 'apr_1'));
    expect(await repo.decide('t-b', 'apr_1', 'rejected', 'rejected', 'bob', 'no')).toBe(true);
    const counts = Object.fromEntries((await repo.pendingByTenant()).map((r) => [r.tenantId, r.pending]));
    expect(counts).toMatchObject({ 't-a': 2 });
    expect(counts['t-b']).toBeUndefined();
  });

  it("finds a run's pending approvals (its tenant's only) and closes them as cancelled", async () => {
    const repo = new ApprovalsRepository(approvals.sql);
    await repo.insert(approval('t-stop', 'apr_1'));
    await repo.insert(approval('t-stop', 'apr_2'));
    await repo.insert(approval('t-other', 'apr_1'));
    expect(await repo.decide('t-stop', 'apr_2', 'granted', 'granted', 'bob', 'ok')).toBe(true);
    const open = await repo.lockPendingOfRun('t-stop', 'run-1');
    expect(open.map((a) => a.id)).toEqual(['apr_1']);
    expect(await repo.decide('t-stop', 'apr_1', 'cancelled', 'cancelled', 'system:run-stop', 'its run stopped')).toBe(
      true,
    );
    expect(await repo.get('t-stop', 'apr_1')).toMatchObject({
      status: 'cancelled',
      decision: { decision: 'cancelled', by: 'system:run-stop', reason: 'its run stopped' },
    });
    expect(await repo.lockPendingOfRun('t-stop', 'run-1')).toEqual([]);
    expect((await repo.get('t-other', 'apr_1'))?.status).toBe('pending');
  });
});
