import path from 'node:path';
import { ApiKeyRepository, openServiceDatabase, type Database } from '@ratchet/adapters';
import {
  approvalsSubjects,
  type ApprovalsReply,
  type ApprovalsRequestInput,
  type ThreadEvent,
} from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { gatewayHttp } from './gateway-http';
import { terminal, TestStack } from './stack';

/*
 * Waitpoints end to end (ADR 0041): orchestrator, tool-executor and approvals as real processes. A run
 * calls `wait.external`, the executor answers `waiting`, the thread records `waitpoint.created` and the
 * approvals service keeps the waitpoint; a completion on the approvals API (what the gateway's routes
 * relay) wakes the run, once.
 */

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/waitpoints');
const ci = { id: 'ci-bot', roles: ['runner'] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('waitpoints: a run waits for the outside world', () => {
  let stack: TestStack;
  let gatewayDb: Database;
  let gatewayUrl = '';
  const keys = { runner: '', viewer: '', other: '' };
  const http = gatewayHttp(() => gatewayUrl);
  beforeAll(async () => {
    stack = await TestStack.create();
    gatewayDb = await openServiceDatabase(stack.testDb.url, 'gateway');
    const repo = new ApiKeyRepository(gatewayDb.sql);
    keys.runner = (await repo.create({ tenantId: TENANT, name: 'ci', roles: ['runner'] })).secret;
    keys.viewer = (await repo.create({ tenantId: TENANT, name: 'viewer', roles: ['viewer'] })).secret;
    keys.other = (await repo.create({ tenantId: 'other', name: 'ci', roles: ['runner'] })).secret;
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('tool-executor'),
      stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' }),
    ]);
    gatewayUrl = `http://127.0.0.1:${(await stack.start('gateway', { WAITPOINT_CALLBACK_KEYS: `k1:${'s'.repeat(40)}` })).port}`;
  });
  afterAll(async () => {
    await stack?.stop();
    await gatewayDb?.close();
  });

  const api = async (request: ApprovalsRequestInput): Promise<ApprovalsReply> => {
    const reply = await stack.nc.request(approvalsSubjects(stack.prefix.subject).api, JSON.stringify(request), {
      timeout: 10_000,
    });
    return JSON.parse(new TextDecoder().decode(reply.data)) as ApprovalsReply;
  };
  const start = async (requestId: string, agent: string) => {
    await stack.publishRequest(TENANT, {
      requestId,
      agent,
      input: [{ role: 'user', content: requestId }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    return { thread: threadIdFor(TENANT, requestId), run: runIdFor(TENANT, requestId) };
  };
  const created = (events: ThreadEvent[]) => events.find((e) => e.type === 'waitpoint.created');
  const waitpointOf = async (thread: string) => {
    const events = await stack.waitFor(TENANT, thread, (e) => created(e) !== undefined);
    const data = created(events)?.data as { waitpointId: string; expiresAt: string; onExpiry: string };
    // The approvals service has it once the thread's outbox row reached it.
    const deadline = Date.now() + 10_000;
    let reply: ApprovalsReply = await api({ op: 'get', tenantId: TENANT, principal: ci, approvalId: data.waitpointId });
    while (!reply.ok && Date.now() < deadline) {
      await sleep(100);
      reply = await api({ op: 'get', tenantId: TENANT, principal: ci, approvalId: data.waitpointId });
    }
    return { ...data, reply };
  };
  const complete = (waitpointId: string, result: unknown, tenantId = TENANT) =>
    api({
      op: 'complete',
      tenantId,
      principal: ci,
      approvalId: waitpointId,
      outcome: 'completed',
      result: result as never,
    });

  it('waits (a named wait), survives an orchestrator SIGKILL, and goes on once when its callback URL is POSTed 5 s later', async () => {
    const { thread, run } = await start('build-42', 'wait-build');
    const wp = await waitpointOf(thread);
    expect(wp.waitpointId).toMatch(/^wp_/);
    expect(wp.onExpiry).toBe('tool_error');
    expect(wp.reply).toMatchObject({
      ok: true,
      approval: { kind: 'waitpoint', status: 'pending', tool: 'wait.external', runId: run },
    });
    // A named wait: on the waitpoint, until its expiry (outside working time and the bound on runs in flight).
    const { folded } = await stack.projectionAndFold(TENANT, thread);
    expect(folded.active?.runId).toBe(run);
    expect(folded.active?.waiting).toMatchObject({ on: 'waitpoint', until: wp.expiresAt });

    // Metrics: a waitpoint pending for the tenant, and no approval waiting for a human.
    const metrics = await (await fetch(`http://127.0.0.1:${stack.services.get('approvals')!.port}/metrics`)).text();
    expect(metrics).toMatch(/^ratchet_waitpoints_pending\{[^}]*tenant="acme"[^}]*\} 1$/m);
    expect(metrics).not.toMatch(/^ratchet_approvals_pending\{[^}]*tenant="acme"[^}]*\} [1-9]/m);

    // The signed callback URL, as the job that will finish is handed it (a runner of the tenant reads it).
    const got = await http('GET', `/v1/waitpoints/${wp.waitpointId}`, keys.runner);
    expect(got).toMatchObject({ status: 200, body: { id: wp.waitpointId, kind: 'waitpoint' } });
    const callbackPath = String(got.body['callbackPath']);
    expect(callbackPath).toMatch(new RegExp(`^/v1/waitpoints/callback/${TENANT}/${wp.waitpointId}/k1\\.\\d+\\.`));
    expect(await http('GET', `/v1/waitpoints/${wp.waitpointId}`, keys.other)).toMatchObject({ status: 404 });
    const token = callbackPath.split('/').at(-1)!;
    const callback = async (path: string, body: unknown) => {
      const res = await fetch(`${gatewayUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    await stack.services.get('orchestrator')?.kill('SIGKILL');
    await sleep(5_000);
    // A token that is not this waitpoint's (tampered, or for another tenant) is a 404, as an unknown id is;
    // a result that does not fit the schema is refused by name: nothing recorded.
    const tampered = callbackPath.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect(await callback(tampered, { result: { build: 42, status: 'green' } })).toMatchObject({ status: 404 });
    expect(
      await callback(callbackPath.replace(`/callback/${TENANT}/`, '/callback/other/'), { result: { build: 42 } }),
    ).toMatchObject({ status: 404 });
    expect(await callback(callbackPath, { result: { build: 'x', status: 'green' } })).toMatchObject({
      status: 400,
      body: { code: 'waitpoint.invalid_result' },
    });
    const first = await callback(callbackPath, { result: { build: 42, status: 'green' } });
    expect(first).toMatchObject({ status: 200, body: { status: 'completed', decision: { by: 'callback' } } });
    await stack.start('orchestrator', { AGENTS_DIR: AGENTS });

    const events = await stack.waitFor(TENANT, thread, terminal(run), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'waitpoint.created')).toHaveLength(1);
    const completed = events.filter((e) => e.type === 'waitpoint.completed');
    expect(completed.map((e) => e.data)).toEqual([
      expect.objectContaining({ waitpointId: wp.waitpointId, by: 'callback' }),
    ]);
    const result = events.find((e) => e.type === 'tool.completed');
    expect(result?.data).toMatchObject({ result: { build: 42, status: 'green' } });
    const reply = events.filter((e) => e.type === 'model.responded').at(-1);
    expect(JSON.stringify(reply?.data)).toContain('build reported');

    // The same POST again: the same answer, and no second continuation; another body: 409, named.
    expect(await callback(callbackPath, { result: { status: 'green', build: 42 } })).toEqual(first);
    expect(await callback(callbackPath, { result: { build: 43, status: 'green' } })).toMatchObject({
      status: 409,
      body: { code: 'waitpoint.conflict' },
    });
    await sleep(1_000);
    const after = await stack.events(TENANT, thread);
    expect(after).toHaveLength(events.length);
    expect(after.map((e) => e.version)).toEqual(after.map((_, i) => i + 1));
    // The token is in no event and no service's log.
    expect(JSON.stringify(after)).not.toContain(token);
    for (const svc of stack.services.values()) expect([svc.name, svc.logs.includes(token)]).toEqual([svc.name, false]);
  });

  it('its TTL passes: the model is told waitpoint.expired, the run ends, and a late completion is refused by name', async () => {
    const { thread, run } = await start('build-late', 'wait-expire');
    const wp = await waitpointOf(thread);
    const events = await stack.waitFor(TENANT, thread, terminal(run), 30_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'waitpoint.expired')).toHaveLength(1);
    const failed = events.find((e) => e.type === 'tool.failed');
    expect(failed?.data).toMatchObject({ error: { code: 'waitpoint.expired' } });
    expect(await complete(wp.waitpointId, { anything: true })).toMatchObject({
      ok: false,
      error: { code: 'conflict', refusal: 'waitpoint.expired' },
    });
    await sleep(500);
    expect(await stack.events(TENANT, thread)).toHaveLength(events.length);
  });

  it('over HTTP: POST /v1/waitpoints/{id}/complete with Idempotency-Key; named refusals; another tenant gets 404', async () => {
    const { thread, run } = await start('build-http', 'wait-build');
    const wp = await waitpointOf(thread);
    const url = `/v1/waitpoints/${wp.waitpointId}/complete`;
    const body = { result: { build: 7, status: 'red' } };

    expect(await http('POST', url, keys.other, body, { 'Idempotency-Key': 'x-1' })).toMatchObject({ status: 404 });
    expect(await http('POST', url, keys.viewer, body, { 'Idempotency-Key': 'v-1' })).toMatchObject({ status: 403 });
    expect(await http('POST', url, keys.runner, { result: 1, error: { code: 'a', message: 'b' } })).toMatchObject({
      status: 400,
    });
    const bad = await http('POST', url, keys.runner, { result: { build: 7 } }, { 'Idempotency-Key': 'ci-0' });
    expect(bad).toMatchObject({ status: 400, body: { code: 'waitpoint.invalid_result' } });
    expect(String(bad.body['detail'])).toContain('status');

    const first = await http('POST', url, keys.runner, body, { 'Idempotency-Key': 'ci-1' });
    expect(first).toMatchObject({ status: 200, body: { id: wp.waitpointId, kind: 'waitpoint', status: 'completed' } });
    // The same request again (the client lost the answer): the first answer, nothing done again.
    expect(await http('POST', url, keys.runner, body, { 'Idempotency-Key': 'ci-1' })).toEqual(first);
    // The same completion under a new key (another sender): the same answer, no second continuation.
    expect(await http('POST', url, keys.runner, body, { 'Idempotency-Key': 'ci-2' })).toMatchObject({
      status: 200,
      body: { status: 'completed' },
    });
    const other = await http(
      'POST',
      url,
      keys.runner,
      { result: { build: 8, status: 'green' } },
      { 'Idempotency-Key': 'ci-3' },
    );
    expect(other).toMatchObject({ status: 409, body: { code: 'waitpoint.conflict' } });

    const events = await stack.waitFor(TENANT, thread, terminal(run), 30_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'waitpoint.completed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ result: body.result });
  });

  it('a completion that arrives while its thread is being claimed, and the orchestrator dies there, is never lost', async () => {
    const { thread, run } = await start('build-claimed', 'wait-build');
    const wp = await waitpointOf(thread);
    // The orchestrator that applies the completion dies inside that decision, before its commit.
    await stack.outboxSettled();
    await stack.services.get('orchestrator')?.kill('SIGKILL');
    const victim = await stack.start('orchestrator', {
      AGENTS_DIR: AGENTS,
      RATCHET_FAILPOINTS: 'orchestrator.before-commit.RecordWaitpointDecision@1',
    });
    expect(await complete(wp.waitpointId, { build: 9, status: 'green' })).toMatchObject({ ok: true });
    expect((await victim.exited).signal).toBe('SIGKILL');
    expect((await stack.events(TENANT, thread)).some((e) => e.type === 'waitpoint.completed')).toBe(false);
    await stack.start('orchestrator', { AGENTS_DIR: AGENTS });
    const events = await stack.waitFor(TENANT, thread, terminal(run), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'waitpoint.completed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ result: { build: 9 } });
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
  });

  it('from the CLI: ratchet waitpoints complete --error reports the job failed; the model is told, the run goes on', async () => {
    const { thread, run } = await start('build-cli', 'wait-build');
    const wp = await waitpointOf(thread);
    const cli = sourceCommand('apps/cli/src/main.ts');
    const ratchet = (args: string[]) =>
      runProcess(cli.command, [...cli.args, ...args, '--gateway', gatewayUrl, '--api-key', keys.runner], cli.env);
    // Listed by the CLI (GET /v1/waitpoints): this run's waitpoint, pending, and no human approval.
    const listed = await ratchet(['waitpoints', 'list', '--status', 'pending', '--thread', thread, '--json']);
    expect(listed.code).toBe(0);
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; kind: string; status: string });
    expect(rows).toEqual([expect.objectContaining({ id: wp.waitpointId, kind: 'waitpoint', status: 'pending' })]);
    const table = await ratchet(['waitpoints', 'list', '--status', 'pending']);
    expect(table.stdout).toContain(wp.waitpointId);
    expect((await http('GET', `/v1/approvals?threadId=${thread}&kind=tool,escalation`, keys.runner)).body).toEqual({
      approvals: [],
    });
    expect(await http('GET', '/v1/approvals?kind=human', keys.runner)).toMatchObject({ status: 400 });
    const usage = await ratchet(['waitpoints', 'complete', wp.waitpointId, '--result', '{}', '--error', 'x']);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain('give either --result');
    const done = await ratchet([
      'waitpoints',
      'complete',
      wp.waitpointId,
      '--error',
      'ci.failed',
      '--message',
      'the build failed',
    ]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`${wp.waitpointId} failed by`);
    const events = await stack.waitFor(TENANT, thread, terminal(run), 30_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'waitpoint.failed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'tool.failed')?.data).toMatchObject({
      error: { code: 'ci.failed', message: 'the build failed' },
    });
  });

  it('the approvals service dies between committing a completion and publishing it: the run still goes on once, and the sender sent again gets the same answer', async () => {
    const { thread, run } = await start('build-relay', 'wait-build');
    const wp = await waitpointOf(thread);
    await stack.services.get('approvals')?.kill('SIGKILL');
    const doomed = await stack.start('approvals', {
      APPROVALS_SWEEP_INTERVAL_MS: '200',
      RATCHET_FAILPOINTS: 'approvals.after-completion-commit',
    });
    // The sender hears nothing: the process died with the decision committed and its message unpublished.
    const lost = await stack.nc
      .request(
        approvalsSubjects(stack.prefix.subject).api,
        JSON.stringify({
          op: 'complete',
          tenantId: TENANT,
          principal: ci,
          approvalId: wp.waitpointId,
          outcome: 'completed',
          result: { build: 11, status: 'green' },
        }),
        { timeout: 5_000 },
      )
      .then(
        () => 'answered',
        () => 'no answer',
      );
    expect(lost).toBe('no answer');
    expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });
    await sleep(1_000);
    expect((await stack.events(TENANT, thread)).some((e) => e.type === 'waitpoint.completed')).toBe(false);

    // Back up, its relay's sweeper publishes the committed message: the run goes on with the result, once.
    await stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' });
    const events = await stack.waitFor(TENANT, thread, terminal(run), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'waitpoint.completed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ result: { build: 11 } });
    // The sender, having heard nothing, sends again: the same completion answers as recorded; nothing more happens.
    expect(await complete(wp.waitpointId, { status: 'green', build: 11 })).toMatchObject({
      ok: true,
      approval: { id: wp.waitpointId, status: 'completed' },
    });
    await sleep(1_000);
    expect(await stack.events(TENANT, thread)).toHaveLength(events.length);
  });
});
