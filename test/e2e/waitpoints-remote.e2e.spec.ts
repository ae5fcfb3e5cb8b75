import path from 'node:path';
import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';
import { catalogOf, ToolProcess } from './tool-processes';

/*
 * A remote tool service that opens waitpoints (docs/waitpoints.md#remote-tool-services): `ci.build`
 * (test/fixtures/tool-services/ci.remote.ts, its own process) starts a build per idempotency key, answers
 * the waitpoint's terms, and completes the waitpoint named in `Ratchet-Waitpoint` over NATS when the
 * build ends. Orchestrator, tool executor and approvals are real processes.
 */
const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/waitpoints-remote');

describe('waitpoints opened by a remote tool service', () => {
  let stack: TestStack;
  let ci: ToolProcess;
  const executorEnv = { REMOTE_DISCOVERY_INTERVAL_MS: '500' };

  beforeAll(async () => {
    stack = await TestStack.create();
    ci = ToolProcess.ts('ci service', 'test/fixtures/tool-services/ci.remote.ts', {
      NATS_URL: stack.env['NATS_URL']!,
      RATCHET_SUBJECT_PREFIX: stack.prefix.subject,
      CI_BUILD_MS: '1500',
    });
    await ci.waitForLog('serving ci tools');
    // The agent lists the service's tool: the catalog must know it before the orchestrator registers it.
    const probe = await stack.start('tool-executor', executorEnv, 'executor-probe');
    await catalogOf(stack.nc, stack.prefix.subject, TENANT, (c) => c.tools.some((t) => t.name === 'ci.build'));
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('approvals', { APPROVALS_SWEEP_INTERVAL_MS: '200' }),
    ]);
    await probe.kill();
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await ci?.kill();
  });

  it('the service starts one build, the run waits on its terms, and goes on once when the service completes it — even after the executor died between the build and its record', async () => {
    // The first executor dies right after the service answered, before the outcome is recorded: the call
    // is sent again with the same key and names the same waitpoint; the service starts no second build.
    const doomed = await stack.start(
      'tool-executor',
      { ...executorEnv, RATCHET_FAILPOINTS: 'tools.after-effect' },
      'executor-doomed',
    );
    const requestId = 'job-7';
    await stack.publishRequest(TENANT, {
      requestId,
      agent: 'remote-build',
      input: [{ role: 'user', content: requestId }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const thread = threadIdFor(TENANT, requestId);
    const run = runIdFor(TENANT, requestId);
    expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });
    await stack.start('tool-executor', executorEnv, 'executor-1');

    const events = await stack.waitFor(TENANT, thread, terminal(run), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    const created = events.filter((e) => e.type === 'waitpoint.created');
    expect(created).toHaveLength(1);
    const data = created[0]!.data as {
      waitpointId: string;
      expiresAt: string;
      onExpiry: string;
      resultSchema?: unknown;
    };
    // The service's terms (10 minutes, its schema); the agent's onExpiry.
    expect(data.onExpiry).toBe('fail_run');
    expect(Date.parse(data.expiresAt) - Date.parse(created[0]!.at)).toBeGreaterThan(590_000);
    expect(data.resultSchema).toMatchObject({ required: ['build', 'status'] });
    const completed = events.filter((e) => e.type === 'waitpoint.completed');
    expect(completed.map((e) => e.data)).toEqual([
      expect.objectContaining({ waitpointId: data.waitpointId, by: 'nats:ci-service' }),
    ]);
    const results = events.filter((e: ThreadEvent) => e.type === 'tool.completed');
    expect(results).toHaveLength(1);
    expect(results[0]?.data).toMatchObject({ result: { build: 1, status: 'green' } });

    // One build for the call, whatever the executor went through; the service completed the very waitpoint the run waits on.
    expect(ci.logs.match(/build started /g)).toHaveLength(1);
    expect(ci.logs).toContain('build already started 1');
    expect(ci.logs).toContain(`waitpoint=${data.waitpointId}`);
    expect(ci.logs).toContain(`completed ${data.waitpointId}`);
  });
});
