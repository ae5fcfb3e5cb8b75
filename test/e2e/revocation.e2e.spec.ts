import path from 'node:path';
import { ApiKeyRepository, openServiceDatabase, type Database } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { gatewayHttp } from './gateway-http';
import { terminal, TestStack } from './stack';

/*
 * Revocation reaches running work: an API key revoked with the CLI (`ratchet keys revoke`) is announced
 * on the bus, and the orchestrator stops the key's queued and running runs at their next step
 * (`run.cancelled`, reason `principal.revoked: …`) and pauses its schedules — not another key's runs.
 * Orchestrator, tool executor and gateway as real processes; the CLI as a process of its own.
 */

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/revocation');
const cli = sourceCommand('apps/cli/src/main.ts');

/** The steps a run's model calls reached (model.requested carries the step). */
const stepsOf = (events: ThreadEvent[], runId: string) =>
  events.filter((e) => e.runId === runId && e.type === 'tool.completed').length;

describe('revocation reaches running work', () => {
  let stack: TestStack;
  let gatewayDb: Database;
  let gatewayUrl = '';
  const http = gatewayHttp(() => gatewayUrl);

  beforeAll(async () => {
    stack = await TestStack.create();
    gatewayDb = await openServiceDatabase(stack.testDb.url, 'gateway');
    await Promise.all([stack.start('orchestrator', { AGENTS_DIR: AGENTS }), stack.start('tool-executor')]);
    gatewayUrl = `http://127.0.0.1:${(await stack.start('gateway')).port}`;
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await gatewayDb?.close();
  });

  it('a 10-step run whose API key is revoked at step 3 stops by step 4 with principal.revoked; its queued run and schedule stop too', async () => {
    const repo = new ApiKeyRepository(gatewayDb.sql);
    const revoked = await repo.create({ tenantId: TENANT, name: 'to-revoke', roles: ['runner'] });
    const other = (await repo.create({ tenantId: TENANT, name: 'stays', roles: ['runner'] })).secret;
    const admin = (await repo.create({ tenantId: TENANT, name: 'admin', roles: ['runner', 'admin'] })).secret;
    const key = revoked.secret;

    const start = async (secret: string, id: string, extra: Record<string, unknown> = {}) => {
      const res = await http(
        'POST',
        '/v1/runs',
        secret,
        { agent: 'ten-steps', input: 'go', ...extra },
        {
          'Idempotency-Key': id,
        },
      );
      expect(res).toMatchObject({ status: 202 });
      return res.body as { runId: string; threadId: string };
    };
    const run = await start(key, 'revoke-main', { threadId: 'th-revoke-main' });
    // Queued behind it on the same thread: it never starts.
    const queued = await start(key, 'revoke-queued', { threadId: 'th-revoke-main', concurrency: 'enqueue' });
    const bystander = await start(other, 'revoke-bystander');
    const schedule = await http('POST', '/v1/schedules', key, {
      id: 'revoke-sched',
      agent: 'ten-steps',
      input: 'tick',
      everySeconds: 3600,
    });
    expect(schedule).toMatchObject({ status: 201, body: { schedule: { paused: false } } });

    await stack.waitFor(TENANT, run.threadId, (events) => stepsOf(events, run.runId) >= 3, 60_000);
    const res = await runProcess(
      cli.command,
      [...cli.args, 'keys', 'revoke', revoked.key.id, '--reason', 'laptop lost', '--json'],
      { ...cli.env, ...stack.env },
    );
    expect(res).toMatchObject({ code: 0 });
    expect(JSON.parse(res.stdout)).toMatchObject({ id: revoked.key.id, revoked: true, announced: 'now' });
    // The revocation is committed and announced once the CLI returns (starting the CLI takes a few steps' time).
    const stepsAtRevocation = stepsOf(await stack.events(TENANT, run.threadId), run.runId);

    const events = await stack.waitFor(TENANT, run.threadId, terminal(queued.runId), 60_000);
    const ended = events.filter((e) => e.runId === run.runId && e.type === 'run.cancelled');
    expect(ended).toHaveLength(1);
    expect(ended[0]!.data).toMatchObject({
      by: expect.stringMatching(/^cli:/),
      reason: expect.stringMatching(
        new RegExp(`^principal\\.revoked: key:${revoked.key.id} revoked by cli:\\S+ at \\S+ \\(laptop lost\\)$`),
      ),
    });
    // It stopped at its next step, not later.
    expect(stepsAtRevocation).toBeGreaterThanOrEqual(3);
    expect(stepsOf(events, run.runId)).toBeLessThanOrEqual(stepsAtRevocation + 1);
    expect(stepsOf(events, run.runId)).toBeLessThan(9);
    expect(events.filter((e) => e.type === 'run.completed')).toEqual([]);
    // The run queued behind it never started.
    expect(events.filter((e) => e.runId === queued.runId).map((e) => e.type)).toEqual(
      expect.arrayContaining(['run.cancelled']),
    );
    expect(events.some((e) => e.runId === queued.runId && e.type === 'run.started')).toBe(false);

    // The key is refused, its schedule is paused with the reason and cannot be resumed.
    expect((await http('GET', '/v1/schedules', key)).status).toBe(401);
    const paused = await http('GET', '/v1/schedules/revoke-sched', admin);
    expect(paused).toMatchObject({
      status: 200,
      body: {
        schedule: { paused: true, nextDueAt: null, pausedReason: expect.stringMatching(/^principal\.revoked: key:/) },
      },
    });
    const listed = await runProcess(cli.command, [...cli.args, 'schedules', 'list', '--tenant', TENANT], {
      ...cli.env,
      ...stack.env,
    });
    expect(listed.stdout).toContain('paused (principal.revoked)');
    expect(listed.stderr).toContain('revoke-sched: principal.revoked: key:');
    const resume = await http('PATCH', '/v1/schedules/revoke-sched', admin, { paused: false });
    expect(resume).toMatchObject({ status: 409 });
    expect(String(resume.body['detail'])).toContain('cannot resume');

    // Another key's run goes on to the end.
    const theirs = await stack.waitFor(TENANT, bystander.threadId, terminal(bystander.runId), 60_000);
    expect(theirs.at(-1)?.type).toBe('run.completed');
    expect(stepsOf(theirs, bystander.runId)).toBe(9);

    // Revoking it again changes nothing and says so.
    const again = await runProcess(cli.command, [...cli.args, 'keys', 'revoke', revoked.key.id], {
      ...cli.env,
      ...stack.env,
    });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('revoked already');
  }, 150_000);
});
