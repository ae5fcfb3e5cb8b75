import { openServiceDatabase, type Database } from '@ratchet/adapters';
import {
  subjects,
  type ApprovalsReply,
  type WaitpointDecisionMessage,
  type WaitpointRequestCommand,
} from '@ratchet/contracts';
import type { OutboxMessage } from '@ratchet/domain';
import { createTestDatabase, type TestDatabase } from '@ratchet/testing';
import { ApprovalsService } from './approvals.service';

/**
 * The approvals service keeps waitpoints (ADR 0041) on real Postgres: a waitpoint request opens one row,
 * a completion is recorded once with the message that wakes its run, and every other completion is
 * refused by name with nothing recorded.
 */
let testDb: TestDatabase;
let db: Database;
let now = new Date('2027-03-01T12:00:00Z');
const published: OutboxMessage[] = [];
let service: ApprovalsService;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'approvals');
  service = new ApprovalsService(
    db,
    {
      publishCommitted: async (messages) => {
        published.push(...messages);
        return messages.length;
      },
    },
    subjects('rt'),
    { now: () => now },
  );
});
afterAll(async () => {
  await db?.close();
  await testDb.drop();
});
beforeEach(() => {
  published.length = 0;
  now = new Date('2027-03-01T12:00:00Z');
});

const ci = { id: 'ci-bot', roles: ['runner'] };
const schema = {
  type: 'object',
  properties: { build: { type: 'integer' }, status: { enum: ['green', 'red'] } },
  required: ['build', 'status'],
  additionalProperties: false,
};
const request = (
  tenantId: string,
  id: string,
  over: Partial<WaitpointRequestCommand> = {},
): WaitpointRequestCommand => ({
  kind: 'waitpoint.request',
  commandId: `cmd-${id}`,
  tenantId,
  threadId: 'th-1',
  runId: 'run-1',
  step: 1,
  callId: `call-${id}`,
  approvalId: id,
  agent: 'deployer',
  tool: 'wait.external',
  args: { job: 'build 42' },
  argsDigest: 'sha256:x',
  expiresAt: '2027-03-01T13:00:00.000Z',
  onExpiry: 'tool_error',
  resultSchema: schema,
  requestedBy: { id: 'alice', roles: ['runner'] },
  ...over,
});
const complete = (
  tenantId: string,
  id: string,
  body: { result?: unknown; error?: { code: string; message: string } },
) =>
  service.complete({
    op: 'complete',
    tenantId,
    principal: ci,
    approvalId: id,
    outcome: body.error ? 'failed' : 'completed',
    ...(body.result !== undefined ? { result: body.result as never } : {}),
    ...(body.error ? { error: body.error } : {}),
  });
const decisionsInOutbox = async (tenantId: string, id: string) =>
  (
    await db.sql.query<{ payload: WaitpointDecisionMessage }>(
      `select payload from ${db.sql.table('outbox')} where id = ?`,
      [`waitpoint-decision:${tenantId}:${id}`],
    )
  ).map((r) => r.payload);
const refusal = (reply: ApprovalsReply) => (reply.ok ? undefined : reply.error);

describe('waitpoints in the approvals service', () => {
  it('opens one waitpoint per request (a re-sent one opens none), shown with its expiry and schema', async () => {
    expect(await service.recordRequest(request('t-open', 'wp_1'))).toBe('created');
    expect(await service.recordRequest(request('t-open', 'wp_1'))).toBe('exists');
    const reply = await service.get({ op: 'get', tenantId: 't-open', principal: ci, approvalId: 'wp_1' });
    expect(reply).toMatchObject({
      ok: true,
      approval: {
        kind: 'waitpoint',
        status: 'pending',
        role: 'runner',
        choices: [],
        expiresAt: '2027-03-01T13:00:00.000Z',
        waitpoint: { onExpiry: 'tool_error', resultSchema: schema },
      },
    });
  });

  it('records a completion once with its wake-up message; the same completion again answers the same and sends nothing more', async () => {
    await service.recordRequest(request('t-done', 'wp_1'));
    const first = await complete('t-done', 'wp_1', { result: { build: 42, status: 'green' } });
    expect(first).toMatchObject({
      ok: true,
      approval: { status: 'completed', decision: { decision: 'completed', by: 'ci-bot' } },
    });
    expect(await decisionsInOutbox('t-done', 'wp_1')).toEqual([
      expect.objectContaining({
        kind: 'waitpoint.decision',
        waitpointId: 'wp_1',
        callId: 'call-wp_1',
        runId: 'run-1',
        decision: 'completed',
        result: { build: 42, status: 'green' },
        by: 'ci-bot',
      }),
    ]);
    expect(published.map((m) => m.id)).toEqual(['waitpoint-decision:t-done:wp_1']);
    expect(published[0]?.subject).toBe('rt.inbox.t-done.th-1');

    // Keys in another order are the same completion.
    const again = await complete('t-done', 'wp_1', { result: { status: 'green', build: 42 } });
    expect(again).toEqual(first);
    expect(published).toHaveLength(1);

    const other = await complete('t-done', 'wp_1', { result: { build: 43, status: 'green' } });
    expect(refusal(other)).toEqual({
      code: 'conflict',
      refusal: 'waitpoint.conflict',
      message: 'this waitpoint was already completed by ci-bot, with another result',
    });
    expect(await decisionsInOutbox('t-done', 'wp_1')).toHaveLength(1);
  });

  it('a failure reported from outside is recorded as failed, with its error for the model', async () => {
    await service.recordRequest(request('t-fail', 'wp_1'));
    const reply = await complete('t-fail', 'wp_1', { error: { code: 'ci.red', message: 'the build failed' } });
    expect(reply).toMatchObject({ ok: true, approval: { status: 'failed', decision: { reason: 'the build failed' } } });
    expect(await decisionsInOutbox('t-fail', 'wp_1')).toEqual([
      expect.objectContaining({
        decision: 'failed',
        error: { code: 'ci.red', message: 'the build failed', retryable: false },
      }),
    ]);
  });

  it('refuses a result that does not fit the schema, naming each problem, and records nothing', async () => {
    await service.recordRequest(request('t-bad', 'wp_1'));
    const reply = await complete('t-bad', 'wp_1', { result: { build: 'forty-two', status: 'green', extra: 1 } });
    expect(refusal(reply)).toMatchObject({ code: 'invalid', refusal: 'waitpoint.invalid_result' });
    expect(refusal(reply)?.message).toContain('/build: must be integer');
    expect(refusal(reply)?.message).toContain('unknown property "extra"');
    const after = await service.get({ op: 'get', tenantId: 't-bad', principal: ci, approvalId: 'wp_1' });
    expect(after).toMatchObject({ ok: true, approval: { status: 'pending', decision: null } });
    expect(await decisionsInOutbox('t-bad', 'wp_1')).toEqual([]);
    // A body that is neither a result nor an error is refused before anything is read.
    const neither = await service.complete({
      op: 'complete',
      tenantId: 't-bad',
      principal: ci,
      approvalId: 'wp_1',
      outcome: 'completed',
    });
    expect(refusal(neither)).toEqual({ code: 'invalid', message: 'a completed waitpoint needs a result' });
  });

  it('lists by kind: waitpoints alone, or only what waits for a human', async () => {
    await service.recordRequest(request('t-kinds', 'wp_1'));
    await service.recordRequest({
      ...request('t-kinds', 'apr_1'),
      kind: 'approval.request',
      role: 'runner',
      fourEyes: false,
    } as never);
    const list = async (kind?: ('tool' | 'escalation' | 'waitpoint')[]) => {
      const reply = await service.list({
        op: 'list',
        tenantId: 't-kinds',
        principal: ci,
        limit: 100,
        ...(kind ? { kind } : {}),
      });
      return reply.ok && 'approvals' in reply ? reply.approvals.map((a) => a.id).sort() : reply;
    };
    expect(await list()).toEqual(['apr_1', 'wp_1']);
    expect(await list(['waitpoint'])).toEqual(['wp_1']);
    expect(await list(['tool', 'escalation'])).toEqual(['apr_1']);
  });

  it("another tenant's waitpoint and an approval's id are not found; a principal without the runner role is refused", async () => {
    await service.recordRequest(request('t-own', 'wp_1'));
    expect(refusal(await complete('t-other', 'wp_1', { result: { build: 1, status: 'red' } }))).toMatchObject({
      code: 'not_found',
    });
    await service.recordRequest({
      ...request('t-own', 'apr_1'),
      kind: 'approval.request',
      role: 'approver',
      fourEyes: false,
    } as never);
    expect(refusal(await complete('t-own', 'apr_1', { result: { build: 1, status: 'red' } }))).toMatchObject({
      code: 'not_found',
    });
    const viewer = await service.complete({
      op: 'complete',
      tenantId: 't-own',
      principal: { id: 'val', roles: ['viewer'] },
      approvalId: 'wp_1',
      outcome: 'completed',
      result: { build: 1, status: 'red' },
    });
    expect(refusal(viewer)).toMatchObject({ code: 'forbidden', refusal: 'waitpoint.forbidden' });
    // Approvers cannot decide a waitpoint: it is completed, not approved.
    const decided = await service.decide({
      op: 'decide',
      tenantId: 't-own',
      principal: { id: 'bob', roles: ['runner', 'approver'] },
      approvalId: 'wp_1',
      decision: 'approve',
      reason: '',
    });
    expect(refusal(decided)).toMatchObject({ code: 'invalid' });
  });

  it('past its TTL: the completion expires it (one expiry message, by ttl) and is refused; later ones are refused the same', async () => {
    await service.recordRequest(request('t-ttl', 'wp_1'));
    now = new Date('2027-03-01T13:00:00.001Z');
    const late = await complete('t-ttl', 'wp_1', { result: { build: 42, status: 'green' } });
    expect(refusal(late)).toEqual({
      code: 'conflict',
      refusal: 'waitpoint.expired',
      message: 'this waitpoint expired at 2027-03-01T13:00:00.000Z',
    });
    expect(await decisionsInOutbox('t-ttl', 'wp_1')).toEqual([
      expect.objectContaining({ decision: 'expired', by: 'ttl', waitpointId: 'wp_1' }),
    ]);
    const later = await complete('t-ttl', 'wp_1', { result: { build: 42, status: 'green' } });
    expect(refusal(later)).toMatchObject({ refusal: 'waitpoint.expired' });
    expect(await decisionsInOutbox('t-ttl', 'wp_1')).toHaveLength(1);
  });

  it('the sweeper expires a waitpoint whose TTL passed with a waitpoint decision, not an approval decision', async () => {
    await service.recordRequest(request('t-sweep', 'wp_1', { expiresAt: new Date(Date.now() - 1_000).toISOString() }));
    await service.expireDue();
    expect(await decisionsInOutbox('t-sweep', 'wp_1')).toEqual([
      expect.objectContaining({ kind: 'waitpoint.decision', decision: 'expired', by: 'ttl' }),
    ]);
  });

  it('a run that stops closes its waitpoints: a completion afterwards is refused as closed, and wakes nothing', async () => {
    await service.recordRequest(request('t-stop', 'wp_1'));
    expect(await service.closeStoppedRun({ tenantId: 't-stop', runId: 'run-1', reason: 'cancelled by alice' })).toBe(1);
    const reply = await complete('t-stop', 'wp_1', { result: { build: 42, status: 'green' } });
    expect(refusal(reply)).toEqual({
      code: 'conflict',
      refusal: 'waitpoint.closed',
      message: 'this waitpoint was closed: its run run-1 stopped: cancelled by alice',
    });
    expect(await decisionsInOutbox('t-stop', 'wp_1')).toEqual([]);
  });
});
