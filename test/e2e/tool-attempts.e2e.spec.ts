import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { freePort } from '@ratchet/testing';
import { terminal, TestStack } from './stack';
import { catalogOf, ToolProcess } from './tool-processes';

/*
 * A tool attempt is over before the next one starts. The tool executor and the orchestrator as real
 * processes; the tool (a module loaded by the executor) ignores its abort signal on its first attempt
 * and takes 3 s against its 1 s timeout, and counts the attempts of each call running at once.
 */

const TENANT = 'acme';
const MODULE = path.resolve(__dirname, '../fixtures/tool-modules/stubborn.tools.ts');

interface Entry {
  key: string;
  event: 'start' | 'end';
  attempt: number;
  running: number;
}

describe('tool attempts, end to end', () => {
  let stack: TestStack;
  const logFile = path.join(mkdtempSync(path.join(tmpdir(), 'ratchet-stubborn-')), 'attempts.jsonl');
  const entries = (): Entry[] =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Entry);

  beforeAll(async () => {
    stack = await TestStack.create();
    await stack.start('tool-executor', { TOOL_MODULES: MODULE, STUBBORN_LOG: logFile, TOOL_ABORT_GRACE_MS: '500' });
    await stack.start('orchestrator', {
      AGENTS_DIR: path.resolve(__dirname, '../agents/stubborn'),
      TOOL_MODULES: MODULE,
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('never overlaps two attempts of one call when an attempt ignores its signal and takes 3x its timeout', async () => {
    const requestIds = ['hung-1', 'hung-2', 'hung-3'];
    await Promise.all(
      requestIds.map((requestId) =>
        stack.publishRequest(TENANT, {
          requestId,
          agent: 'stubborn',
          input: [{ role: 'user', content: requestId }],
          principal: { id: 'alice', roles: ['runner'] },
        }),
      ),
    );
    for (const requestId of requestIds) {
      const events = await stack.waitFor(
        TENANT,
        threadIdFor(TENANT, requestId),
        terminal(runIdFor(TENANT, requestId)),
        60_000,
      );
      // The clean attempt's answer is the call's result; the abandoned one's never is.
      expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ result: { attempt: 2 } });
      expect(events.at(-1)?.type).toBe('run.completed');
    }
    const log = entries();
    for (const key of new Set(log.map((e) => e.key))) {
      const attempts = log.filter((e) => e.key === key);
      // Each call: the hung attempt, then a clean one, started only after the hung one ended.
      expect(attempts.map((e) => `${e.event}#${e.attempt}`)).toEqual(['start#1', 'end#1', 'start#2', 'end#2']);
      expect(Math.max(...attempts.map((e) => (e.event === 'start' ? e.running : 0)))).toBe(1);
    }
    expect(new Set(log.map((e) => e.key)).size).toBe(3);

    // Each abandoned attempt is counted in /metrics and logged with the call's key.
    const executor = stack.services.get('tool-executor')!;
    const metrics = await (await fetch(`http://127.0.0.1:${executor.port}/metrics`)).text();
    expect(metrics).toMatch(/^ratchet_tool_abandoned_attempts_total\{[^}]*tool="test.stubborn"[^}]*\} 3$/m);
    const abandonedLines = executor.logs.split('\n').filter((l) => l.includes('tool attempt abandoned'));
    for (const key of new Set(log.map((e) => e.key))) expect(abandonedLines.some((l) => l.includes(key))).toBe(true);
  }, 90_000);
});

describe('MCP tool calls that time out or whose run is cancelled, end to end', () => {
  let stack: TestStack;
  let server: ToolProcess;

  beforeAll(async () => {
    const port = await freePort();
    server = ToolProcess.ts('slow (mcp)', 'test/fixtures/mcp/slow-server.ts', { MCP_PORT: String(port) });
    await server.waitForLog('MCP server on');
    stack = await TestStack.create();
    const url = `http://127.0.0.1:${port}/mcp`;
    await stack.start('tool-executor', {
      // One server, two names: calls of `slow.*` time out after 1 s, calls of `patient.*` after 60 s.
      MCP_SERVERS: JSON.stringify([
        { name: 'slow', url, timeoutMs: 1000 },
        { name: 'patient', url, timeoutMs: 60_000 },
      ]),
    });
    await stack.start('orchestrator', { AGENTS_DIR: path.resolve(__dirname, '../agents/mcp-cancel') });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await server?.kill();
  });

  const ask = (requestId: string, agent: string, content: string) =>
    stack.publishRequest(TENANT, {
      requestId,
      agent,
      input: [{ role: 'user', content }],
      principal: { id: 'alice', roles: ['runner'] },
    });

  it('tells the MCP server with notifications/cancelled when a call times out', async () => {
    await ask('mcp-timeout', 'mcp-wait', 'late-answer 5000');
    await server.waitForLog('started late-answer');
    // The SDK's request timeout (1 s) cancels the request at the server, which stops waiting.
    await server.waitForLog('cancelled late-answer', 5_000);
    const events = await stack.waitFor(
      TENANT,
      threadIdFor(TENANT, 'mcp-timeout'),
      terminal(runIdFor(TENANT, 'mcp-timeout')),
      60_000,
    );
    expect(events.find((e) => e.type === 'tool.failed')?.data).toMatchObject({ error: { code: 'mcp.timeout' } });
    // The reason is the notification's (what the client said), so the cancel came by notifications/cancelled.
    expect(server.logs).toMatch(/cancelled late-answer .*timed out/);
    expect(server.logs).not.toContain('finished late-answer');
  }, 90_000);

  it('tells the MCP server with notifications/cancelled when the run is cancelled mid-call, within 2 s', async () => {
    await ask('mcp-cancel', 'mcp-patient', 'cancel-me 50000');
    await server.waitForLog('started cancel-me');
    const threadId = threadIdFor(TENANT, 'mcp-cancel');
    const runId = runIdFor(TENANT, 'mcp-cancel');
    await stack.cancelRun(TENANT, threadId, runId, 'changed plans');
    const cancelledAt = Date.now();
    await server.waitForLog('cancelled cancel-me', 2_000);
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
    const events = await stack.waitFor(TENANT, threadId, terminal(runId), 30_000);
    expect(events.find((e) => e.type === 'run.cancelled')).toBeDefined();
    expect(server.logs).toMatch(/cancelled cancel-me .*stopped: changed plans/);
    expect(server.logs).not.toContain('finished cancel-me');
  }, 60_000);
});

describe('remote tool calls whose run is cancelled, end to end (TypeScript and Python services)', () => {
  let stack: TestStack;
  const services: ToolProcess[] = [];

  beforeAll(async () => {
    stack = await TestStack.create();
    const env = { NATS_URL: stack.env['NATS_URL']!, RATCHET_SUBJECT_PREFIX: stack.prefix.subject };
    services.push(
      ToolProcess.ts('crm (ts)', 'examples/remote-tool-service/main.ts', env),
      ToolProcess.spawn('units (python)', 'python3', ['examples/remote-tool-service-python/tool_service.py'], env),
    );
    await Promise.all(services.map((s) => s.waitForLog('serving')));
    await stack.start('tool-executor', { REMOTE_DISCOVERY_INTERVAL_MS: '500' });
    await catalogOf(stack.nc, stack.prefix.subject, TENANT, (c) =>
      ['crm.export_report', 'units.slow_count'].every((name) => c.tools.some((t) => t.name === name)),
    );
    await stack.start('orchestrator', { AGENTS_DIR: path.resolve(__dirname, '../agents/remote-cancel') });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(services.map((s) => s.kill()));
  });

  it.each([
    { service: 0, agent: 'report-wait', label: 'report-cancel' },
    { service: 1, agent: 'count-wait', label: 'count-cancel' },
  ])('$agent: the service sees the cancel within 2 s and stops', async ({ service, agent, label }) => {
    const peer = services[service]!;
    await stack.publishRequest(TENANT, {
      requestId: label,
      agent,
      input: [{ role: 'user', content: `${label} 50` }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    await peer.waitForLog(`started ${label}`);
    const threadId = threadIdFor(TENANT, label);
    const runId = runIdFor(TENANT, label);
    await stack.cancelRun(TENANT, threadId, runId, 'changed plans');
    const cancelledAt = Date.now();
    await peer.waitForLog(`cancelled ${label}`, 2_000);
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
    expect(peer.logs).toMatch(new RegExp(`cancelled ${label}: .*stopped: changed plans`));
    const events = await stack.waitFor(TENANT, threadId, terminal(runId), 30_000);
    expect(events.find((e) => e.type === 'run.cancelled')).toBeDefined();
    expect(peer.logs).not.toContain(`finished ${label}`);
  });
});
