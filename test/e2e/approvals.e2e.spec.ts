import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  ApiKeyRepository,
  ApprovalsRepository,
  openServiceDatabase,
  threadEffects,
  type Database,
} from '@ratchet/adapters';
import type { ApprovalDecisionMessage, ApprovalView, ThreadEvent } from '@ratchet/contracts';
import { EffectService } from '@ratchet/testing';
import { gatewayHttp } from './gateway-http';
import { terminal, TestStack } from './stack';

/*
 * Approvals end to end (issue #6): orchestrator, tool-executor, approvals and gateway as real processes.
 * Runs are started through the gateway, so the run's principal is `key:<api key id>`; approvers decide
 * over HTTP; the charge tool (at-most-once) calls a counting effect service in this process, so "executed
 * once" is counted where the effect happens, not inferred.
 */

const TENANT = 'acme';
const ISSUER = 'https://idp.approvals.test';
const AUDIENCE = 'ratchet';
const AGENTS = path.resolve(__dirname, '../agents/approvals');

interface Keys {
  runner: string;
  approver: string;
  viewer: string;
  other: string;
}

const types = (events: ThreadEvent[]) => events.map((e) => e.type);

describe('approvals, end to end', () => {
  let stack: TestStack;
  let gatewayDb: Database;
  let approvalsDb: Database;
  let toolsDb: Database;
  const effects = new EffectService();
  const keys = {} as Keys;
  let runnerKeyId = '';
  let gatewayUrl = '';
  let jwks: Server;
  let signingKey: KeyLike;

  const http = gatewayHttp(() => gatewayUrl);

  const startRun = async (key: string, requestId: string, input: string, agent = 'pay') => {
    const res = await http('POST', '/v1/runs', key, { agent, input }, { 'Idempotency-Key': requestId });
    expect(res.status).toBe(202);
    return res.body as { runId: string; threadId: string };
  };

  const pending = async (threadId: string, n: number, key = keys.approver): Promise<ApprovalView[]> => {
    const deadline = Date.now() + 30_000;
    let last: ApprovalView[] = [];
    while (Date.now() < deadline) {
      const res = await http('GET', `/v1/approvals?status=pending&threadId=${threadId}`, key);
      expect(res.status).toBe(200);
      last = (res.body as { approvals: ApprovalView[] }).approvals;
      if (last.length >= n) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`expected ${n} pending approvals on ${threadId}, got ${last.length}`);
  };

  const decide = (id: string, key: string, decision: string, reason = '') =>
    http('POST', `/v1/approvals/${id}/decision`, key, { decision, reason });

  beforeAll(async () => {
    // Runs may also be started with JWTs of an identity provider whose keys this test serves.
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    stack = await TestStack.create();
    await effects.start();
    gatewayDb = await openServiceDatabase(stack.testDb.url, 'gateway');
    approvalsDb = await openServiceDatabase(stack.testDb.url, 'approvals');
    toolsDb = await openServiceDatabase(stack.testDb.url, 'tools');
    const repo = new ApiKeyRepository(gatewayDb.sql);
    // The requester holds approver too: four-eyes, not a missing role, is what stops it approving its own call.
    const runner = await repo.create({ tenantId: TENANT, name: 'runner', roles: ['runner', 'approver'] });
    runnerKeyId = runner.key.id;
    keys.runner = runner.secret;
    keys.approver = (await repo.create({ tenantId: TENANT, name: 'approver', roles: ['approver'] })).secret;
    keys.viewer = (await repo.create({ tenantId: TENANT, name: 'viewer', roles: ['viewer'] })).secret;
    keys.other = (await repo.create({ tenantId: 'globex', name: 'other', roles: ['runner', 'approver'] })).secret;
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: effects.url }),
      stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' }),
    ]);
    const gateway = await stack.start('gateway', {
      GATEWAY_JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
      GATEWAY_JWT_ISSUER: ISSUER,
      GATEWAY_JWT_AUDIENCE: AUDIENCE,
    });
    gatewayUrl = `http://127.0.0.1:${gateway.port}`;
  });

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([gatewayDb?.close(), approvalsDb?.close(), toolsDb?.close()]);
    await effects.stop();
    jwks?.closeAllConnections();
    await new Promise((r) => jwks?.close(r));
  });

  it('runs a call whose arguments do not meet the condition without asking anyone', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'small', 'small pen');
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(types(events)).not.toContain('approval.requested');
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(effects.arrivalsFor(runId)).toBe(1);
  });

  it('waits for an approver while the sibling call finishes, then runs the approved call once', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'big', 'big car');
    const [approval] = await pending(threadId, 1);
    expect(approval).toMatchObject({
      kind: 'tool',
      tool: 'demo.effect.charge',
      args: { item: 'car', amount: 500 },
      role: 'approver',
      fourEyes: true,
      requestedBy: `key:${runnerKeyId}`,
      choices: ['approve', 'reject'],
    });
    // The weather call of the same super-step did not wait.
    const before = await stack.waitFor(TENANT, threadId, (ev) => types(ev).includes('tool.completed'));
    expect(types(before)).not.toContain('run.completed');
    expect(effects.arrivalsFor(runId)).toBe(0);

    const res = await decide(approval!.id, keys.approver, 'approve', 'looks right');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'granted', decision: { decision: 'granted', reason: 'looks right' } });
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(types(events).filter((t) => t === 'approval.granted')).toHaveLength(1);
    expect(effects.arrivalsFor(runId)).toBe(1);

    const audit = await new ApprovalsRepository(approvalsDb.sql).auditOf(TENANT, approval!.id);
    expect(audit.map((a) => a.action)).toEqual(['requested', 'granted', 'used']);
    expect(audit.every((a) => a.argsDigest === approval!.argsDigest)).toBe(true);
    expect(audit[1]?.actor).toMatch(/^key:/);
  });

  it('a rejection goes back to the model as the tool result, with the reason', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'reject', 'big boat');
    const [approval] = await pending(threadId, 1);
    expect((await decide(approval!.id, keys.approver, 'reject', 'too expensive')).status).toBe(200);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    const failed = events.find((e) => e.type === 'tool.failed');
    expect(failed?.data).toMatchObject({ error: { code: 'approval.rejected' } });
    expect(JSON.stringify(failed?.data)).toContain('too expensive');
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(JSON.stringify(events.at(-1)?.data)).toContain('too expensive');
    expect(effects.arrivalsFor(runId)).toBe(0);
  });

  it('addresses several pending approvals of one super-step by their ids', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'two', 'two lamps');
    const approvals = await pending(threadId, 2);
    const a = approvals.find((x) => (x.args as { item: string }).item === 'lamps-a')!;
    const b = approvals.find((x) => (x.args as { item: string }).item === 'lamps-b')!;
    expect(a.id).not.toBe(b.id);
    expect((await decide(b.id, keys.approver, 'reject', 'not b')).status).toBe(200);
    expect((await decide(a.id, keys.approver, 'approve')).status).toBe(200);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(effects.arrivalsFor(`${runId}:1:call_1_1`)).toBe(1);
    expect(effects.arrivalsFor(`${runId}:1:call_1_2`)).toBe(0);
  });

  it('refuses another tenant (404), a missing role (403) and the requester itself under four-eyes (403)', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'authz', 'big bike');
    const [approval] = await pending(threadId, 1);
    const id = approval!.id;

    const foreign = await decide(id, keys.other, 'approve');
    expect(foreign.status).toBe(404);
    const unknown = await decide('apr_doesnotexist', keys.approver, 'approve');
    expect(unknown.status).toBe(404);
    expect(foreign.body['detail']).toBe(unknown.body['detail']);
    const foreignList = await http('GET', `/v1/approvals?threadId=${threadId}`, keys.other);
    expect((foreignList.body as { approvals: unknown[] }).approvals).toEqual([]);

    const viewer = await decide(id, keys.viewer, 'approve');
    expect(viewer.status).toBe(403);
    const own = await decide(id, keys.runner, 'approve');
    expect(own.status).toBe(403);
    expect(String(own.body['detail'])).toContain('four-eyes');

    // None of them decided anything: the approval still waits, and the charge has not happened.
    expect((await pending(threadId, 1))[0]?.status).toBe('pending');
    expect(effects.arrivalsFor(runId)).toBe(0);
    const audit = await new ApprovalsRepository(approvalsDb.sql).auditOf(TENANT, id);
    expect(audit.filter((a) => a.action === 'refused')).toHaveLength(2);

    expect((await decide(id, keys.approver, 'approve')).status).toBe(200);
    await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(effects.arrivalsFor(runId)).toBe(1);
  });

  it('expires an approval nobody decided in time and tells the model', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'expire', 'hat', 'pay-quick');
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(types(events)).toEqual(expect.arrayContaining(['approval.requested', 'approval.expired', 'tool.failed']));
    expect(events.find((e) => e.type === 'tool.failed')?.data).toMatchObject({ error: { code: 'approval.expired' } });
    const approvalId = (events.find((e) => e.type === 'approval.requested')?.data as { approvalId: string }).approvalId;
    const stored = await new ApprovalsRepository(approvalsDb.sql).get(TENANT, approvalId);
    expect(stored?.status).toBe('expired');
    expect(stored?.decision?.by).toBe('system:expiry');
    // Too late to decide now.
    expect((await decide(approvalId, keys.approver, 'approve')).status).toBe(409);
    expect(effects.arrivalsFor(runId)).toBe(0);
  });

  it("does not run an approved call when the requester's key was revoked before the decision is applied", async () => {
    const repo = new ApiKeyRepository(gatewayDb.sql);
    const requester = await repo.create({ tenantId: TENANT, name: 'soon-revoked', roles: ['runner'] });
    const { runId, threadId } = await startRun(requester.secret, 'revoked', 'big house');
    const [approval] = await pending(threadId, 1);
    expect(await repo.revoke(requester.key.id)).toBe(true);
    // The approver is fine, so the approvals service records the grant; the orchestrator's re-check refuses it.
    expect((await decide(approval!.id, keys.approver, 'approve')).status).toBe(200);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(types(events)).not.toContain('approval.granted');
    const rejected = events.find((e) => e.type === 'approval.rejected');
    expect(rejected?.data).toMatchObject({ by: 'system:recheck' });
    expect(String((rejected?.data as { reason: string }).reason)).toMatch(
      /^approval\.revoked: the requester no longer holds runner/,
    );
    // The run is told why, as the tool's result.
    expect(JSON.stringify(events.find((e) => e.type === 'tool.failed')?.data)).toContain('approval.revoked');
    expect(effects.arrivalsFor(runId)).toBe(0);
    const effectsOfThread = await threadEffects(toolsDb.sql, TENANT, threadId);
    expect(effectsOfThread.effects.filter((e) => e.tool === 'demo.effect.charge')).toHaveLength(0);
  });

  it('stops the run of a JWT subject revoked while it waits for an approval; the approved call never runs', async () => {
    const jwt = await new SignJWT({ tenant: TENANT, roles: ['runner'], iss: ISSUER, aud: AUDIENCE })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('soon-gone')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(signingKey);
    const { runId, threadId } = await startRun(jwt, 'jwt-revoked', 'big boat');
    const [approval] = await pending(threadId, 1);
    const admin = (
      await new ApiKeyRepository(gatewayDb.sql).create({ tenantId: TENANT, name: 'admin', roles: ['admin'] })
    ).secret;
    expect((await http('POST', '/v1/revocations', admin, { subject: 'soon-gone', reason: 'left' })).status).toBe(201);
    // The token itself is refused from now on, as an invalid one is.
    expect((await http('GET', '/v1/approvals', jwt)).status).toBe(401);
    // The revocation is announced: the run stops at its next step. An approver deciding meanwhile either
    // comes too late (409) or is turned into a rejection when the approved call would run (the re-check).
    expect([200, 409]).toContain((await decide(approval!.id, keys.approver, 'approve')).status);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(types(events)).not.toContain('approval.granted');
    expect(events.at(-1)).toMatchObject({
      type: 'run.cancelled',
      data: {
        by: expect.stringMatching(/^key:/),
        reason: expect.stringMatching(/^principal\.revoked: jwt:soon-gone /),
      },
    });
    expect(effects.arrivalsFor(runId)).toBe(0);
    const effectsOfThread = await threadEffects(toolsDb.sql, TENANT, threadId);
    expect(effectsOfThread.effects.filter((e) => e.tool === 'demo.effect.charge')).toHaveLength(0);
  });

  it('refuses a call to a tool whose roles the requester lacks, and again when its role is gone by the time the approved call runs', async () => {
    const repo = new ApiKeyRepository(gatewayDb.sql);
    // Without payments: the call is refused as it starts; nobody is asked, nothing runs.
    const plain = await repo.create({ tenantId: TENANT, name: 'no-payments', roles: ['runner'] });
    const refused = await startRun(plain.secret, 'tool-role-missing', 'kayak', 'pay-restricted');
    const refusedEvents = await stack.waitFor(TENANT, refused.threadId, terminal(refused.runId));
    expect(types(refusedEvents)).not.toContain('approval.requested');
    expect(refusedEvents.find((e) => e.type === 'tool.failed')?.data).toMatchObject({
      error: {
        code: 'tool.forbidden',
        message: "using demo.effect.charge needs the role payments, which the run's principal does not hold",
      },
    });
    expect(types(refusedEvents)).toContain('run.completed');
    expect(effects.arrivalsFor(refused.runId)).toBe(0);

    // With payments the call waits for an approver; the role is taken away before the grant is applied.
    const payer = await repo.create({ tenantId: TENANT, name: 'payer', roles: ['runner', 'payments'] });
    const { runId, threadId } = await startRun(payer.secret, 'tool-role-lost', 'canoe', 'pay-restricted');
    const [approval] = await pending(threadId, 1);
    await gatewayDb.sql.run(`update ${gatewayDb.sql.table('api_keys')} set roles = array['runner'] where id = ?`, [
      payer.key.id,
    ]);
    expect((await decide(approval!.id, keys.approver, 'approve')).status).toBe(200);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(types(events)).not.toContain('approval.granted');
    expect(String((events.find((e) => e.type === 'approval.rejected')?.data as { reason: string }).reason)).toMatch(
      /^approval\.tool_forbidden: using demo\.effect\.charge needs the role payments/,
    );
    expect(effects.arrivalsFor(runId)).toBe(0);
  });

  it('executes once however often the decision is made or its message replayed', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'replay', 'big kite');
    const [approval] = await pending(threadId, 1);
    const id = approval!.id;
    expect((await decide(id, keys.approver, 'approve')).status).toBe(200);
    expect((await decide(id, keys.approver, 'approve')).status).toBe(409);
    await stack.waitFor(TENANT, threadId, terminal(runId));

    // Replay the decision on the thread inbox: the same message id, and a new one (past any dedup window).
    const message: ApprovalDecisionMessage = {
      kind: 'approval.decision',
      messageId: `approval-decision:${TENANT}:${id}`,
      tenantId: TENANT,
      threadId,
      runId,
      callId: approval!.callId,
      approvalId: id,
      decision: 'granted',
      by: 'key:replayer',
      reason: '',
    };
    const js = stack.nc.jetstream();
    const subject = `${stack.prefix.subject}.inbox.${TENANT}.${threadId}`;
    await js.publish(subject, JSON.stringify(message), { msgID: `replay-1-${Date.now()}` });
    await js.publish(subject, JSON.stringify({ ...message, messageId: `forged-${Date.now()}` }), {
      msgID: `replay-2-${Date.now()}`,
    });
    const count = await stack.events(TENANT, threadId);
    await new Promise((r) => setTimeout(r, 1500));
    const events = await stack.events(TENANT, threadId);
    expect(events).toHaveLength(count.length);
    expect(types(events).filter((t) => t === 'approval.granted')).toHaveLength(1);
    const charges = events.filter(
      (e) => e.type === 'tool.completed' && (e.data as { callId: string }).callId === approval!.callId,
    );
    expect(charges).toHaveLength(1);
    expect(effects.arrivalsFor(runId)).toBe(1);
    const ledger = await threadEffects(toolsDb.sql, TENANT, threadId);
    const charge = ledger.effects.filter((e) => e.tool === 'demo.effect.charge');
    expect(charge).toHaveLength(1);
    expect(charge[0]).toMatchObject({ state: 'succeeded', attempts: 1, dedupHits: 0 });
  });

  it('keeps waiting across SIGKILLs of the orchestrator and the approvals service', async () => {
    const { runId, threadId } = await startRun(keys.runner, 'crash', 'big piano');
    const [approval] = await pending(threadId, 1);
    await stack.services.get('orchestrator')?.kill('SIGKILL');
    await stack.services.get('approvals')?.kill('SIGKILL');
    // The decision is recorded while the orchestrator is down, then the approvals service dies too.
    await stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' });
    expect((await decide(approval!.id, keys.approver, 'approve', 'after the crash')).status).toBe(200);
    await stack.services.get('approvals')?.kill('SIGKILL');
    expect(effects.arrivalsFor(runId)).toBe(0);
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' }),
    ]);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(types(events).filter((t) => t === 'approval.granted')).toHaveLength(1);
    expect(effects.arrivalsFor(runId)).toBe(1);
  });
  it("closes a stopped run's pending approval even when the approvals service was down as the run stopped", async () => {
    const { runId, threadId } = await startRun(keys.runner, 'stop-while-down', 'big boat');
    const [approval] = await pending(threadId, 1);
    await stack.services.get('approvals')?.kill('SIGKILL');
    const cancel = await http('POST', `/v1/runs/${runId}/cancel`, keys.runner, { reason: 'changed plans' });
    expect(cancel.status).toBe(202);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.at(-1)?.type).toBe('run.cancelled');
    // Nobody heard the broadcast; the durable notice waits for the service and closes the approval then.
    await stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' });
    const deadline = Date.now() + 30_000;
    let view: ApprovalView | undefined;
    while (Date.now() < deadline) {
      view = (await http('GET', `/v1/approvals/${approval!.id}`, keys.approver)).body as unknown as ApprovalView;
      if (view?.status !== 'pending') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(view).toMatchObject({
      status: 'cancelled',
      decision: { decision: 'cancelled', by: 'system:run-stop', reason: expect.stringContaining('changed plans') },
    });
    expect(effects.arrivalsFor(runId)).toBe(0);
  });

  it('holds an uncertain effect as an escalation with its own choices, and the answer reaches the run', async () => {
    // An executor whose effect service is unreachable: the charge may have acted, so it is `uncertain`.
    await stack.services.get('tool-executor')?.kill('SIGKILL');
    await stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: 'http://127.0.0.1:1/' });
    const { runId, threadId } = await startRun(keys.runner, 'escalate', 'small vase');
    const [escalation] = await pending(threadId, 1);
    expect(escalation).toMatchObject({
      kind: 'escalation',
      tool: 'demo.effect.charge',
      choices: ['happened', 'retry', 'fail'],
      idempotencyKey: expect.stringContaining(runId),
    });
    expect(types(await stack.events(TENANT, threadId))).toContain('effect.uncertain');
    expect((await decide(escalation!.id, keys.approver, 'approve')).status).toBe(400);
    expect((await decide(escalation!.id, keys.viewer, 'fail')).status).toBe(403);
    expect((await decide(escalation!.id, keys.approver, 'fail', 'the provider shows no charge')).status).toBe(200);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.find((e) => e.type === 'tool.failed')?.data).toMatchObject({
      error: { code: 'effect.failed_by_human' },
    });
    expect(events.at(-1)?.type).toBe('run.completed');
    const ledger = await threadEffects(toolsDb.sql, TENANT, threadId);
    expect(ledger.effects[0]).toMatchObject({ resolution: 'fail', resolvedBy: expect.stringMatching(/^key:/) });
  });
});
