import { writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { subjects } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * A real demo run through the real services, then the operator commands against what they wrote:
 * the SRE's questions "what happened, and is the stored state right?" on a genuine thread.
 */
const TENANT = 'clie2e';
const cli = sourceCommand('apps/cli/src/main.ts');
const ratchet = (args: string[], env: Record<string, string>) =>
  runProcess(cli.command, [...cli.args, ...args], { ...cli.env, ...env });
const jsonLines = <T = Record<string, unknown>>(text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
const ok = expect.objectContaining({ code: 0 });
const failed = expect.objectContaining({ code: 1 });

describe('ratchet operator commands on a real run', () => {
  let stack: TestStack;
  const requestId = 'cli-e2e-run-1';
  const runId = runIdFor(TENANT, requestId);
  const threadId = threadIdFor(TENANT, requestId);

  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator'), stack.start('tool-executor')]);
    await stack.publishRequest(TENANT, {
      requestId,
      agent: 'demo',
      input: [{ role: 'user', content: 'What is the weather in Oslo and Rome?' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    await stack.waitFor(TENANT, threadId, terminal(runId));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('doctor compares the bus with the declared topology: only what no service ensured is missing', async () => {
    // Only the orchestrator and the tool executor run: the approvals consumer has not been created.
    const first = await ratchet(['doctor', '--json'], stack.env);
    const problems = jsonLines<{ area: string; name: string; ok: boolean; detail: string }>(first.stdout).filter(
      (c) => !c.ok,
    );
    expect(problems.every((c) => c.area === 'consumer' && c.detail.startsWith('missing'))).toBe(true);
    expect(first).toEqual(problems.length === 0 ? ok : failed);
    expect(await ratchet(['migrate'], stack.env)).toEqual(ok);
    const doctor = await ratchet(['doctor'], stack.env);
    expect(doctor).toEqual(ok);
    expect(doctor.stdout).toMatch(/all \d+ checks passed/);
  });

  it('events shows the run with its tool calls joined to the effect ledger; effects lists the rows', async () => {
    const events = await ratchet(['events', threadId], stack.env);
    expect(events).toEqual(ok);
    expect(events.stdout).toMatch(/tool\.requested +demo\.weather \S+ key .* \[ledger succeeded ×1\]/);
    expect(events.stdout).toContain('run.completed');
    const effects = await ratchet(['effects', threadId, '--json'], stack.env);
    expect(effects).toEqual(ok);
    const rows = jsonLines<{ tool: string; state: string; logOutcome: string }>(effects.stdout);
    expect(rows.length).toBeGreaterThan(0);
    expect(
      rows.every((r) => r.tool === 'demo.weather' && r.state === 'succeeded' && r.logOutcome === 'completed'),
    ).toBe(true);
    const threads = await ratchet(['threads', '--tenant', TENANT, '--json'], stack.env);
    expect(jsonLines(threads.stdout)).toEqual([
      expect.objectContaining({
        threadId,
        status: 'idle',
        lastRun: expect.objectContaining({ runId, status: 'completed' }),
      }),
    ]);
  });

  it('replay --verify proves the projection the orchestrator wrote; a corruption is caught and rebuilt', async () => {
    expect(await ratchet(['replay', '--all', '--verify'], stack.env)).toEqual(ok);
    await stack.orchestratorDb.sql.run(`update orchestrator.runs set status = 'failed' where run_id = ?`, [runId]);
    await stack.orchestratorDb.sql.run(
      `update orchestrator.thread_messages set message = jsonb_set(message, '{content}', '"tampered"') where thread_id = ? and seq = 1`,
      [threadId],
    );
    const broken = await ratchet(['replay', threadId, '--verify'], stack.env);
    expect(broken).toEqual(failed);
    expect(broken.stdout).toContain(`runs.${runId}.status: stored "failed" ≠ replayed "completed"`);
    expect(broken.stdout).toContain('messages.1.content: stored "tampered" ≠ replayed');
    expect(await ratchet(['rebuild', '--thread', threadId], stack.env)).toEqual(ok);
    expect(await ratchet(['replay', threadId, '--verify'], stack.env)).toEqual(ok);
  });

  it('stream-check finds the event deleted from the EVENTS stream and --repair puts it back', async () => {
    expect(await ratchet(['stream-check', threadId], stack.env)).toEqual(ok);
    const jsm = await stack.nc.jetstreamManager();
    const stream = `${stack.prefix.stream}_EVENTS`;
    // The last decision message of the thread's feed (v2): it carries the run's end.
    const last = await jsm.streams.getMessage(stream, {
      last_by_subj: subjects(stack.prefix.subject).feed(TENANT, threadId),
    });
    expect(await jsm.streams.deleteMessage(stream, last.seq)).toBe(true);
    const check = await ratchet(['stream-check', threadId], stack.env);
    expect(check).toEqual(failed);
    expect(check.stdout).toMatch(/missing +v\d+ run\.completed/);
    expect(await ratchet(['stream-check', threadId, '--repair'], stack.env)).toEqual(ok);
    const after = await ratchet(['stream-check', threadId, '--json'], stack.env);
    expect(after).toEqual(ok);
    expect(jsonLines(after.stdout)[0]).toMatchObject({ missing: [], unknown: [] });
  });

  it('fork at the tool requests gives a valid thread with the run cancelled', async () => {
    const events = await stack.events(TENANT, threadId);
    const at = events.filter((e) => e.type === 'tool.requested').at(-1)!.version;
    const fork = await ratchet(['fork', threadId, '--at', String(at), '--json'], stack.env);
    expect(fork).toEqual(ok);
    const [report] = jsonLines<{ threadId: string; cancelledRuns: string[] }>(fork.stdout);
    expect(report!.cancelledRuns).toHaveLength(1);
    const forked = await stack.events(TENANT, report!.threadId);
    // The run is cancelled; its calls, never sent from the fork, are closed as cancelled right after.
    const end = forked.findIndex((e) => e.type === 'run.cancelled');
    expect(forked[end]).toMatchObject({ data: { reason: 'forked' } });
    const upToFork = events.filter((e) => e.version <= at);
    const answered = new Set(
      upToFork
        .filter((e) => e.type === 'tool.completed' || e.type === 'tool.failed')
        .map((e) => (e.data as { callId: string }).callId),
    );
    const open = upToFork.filter(
      (e) => e.type === 'tool.requested' && !answered.has((e.data as { callId: string }).callId),
    );
    expect(forked.slice(end + 1).map((e) => e.type)).toEqual(open.map(() => 'tool.cancelled'));
    expect(await ratchet(['replay', report!.threadId, '--verify'], stack.env)).toEqual(ok);
  });

  it('export → delete the rows → import reproduces the thread exactly', async () => {
    const before = await stack.events(TENANT, threadId);
    const exported = await ratchet(['export', threadId], stack.env);
    expect(exported).toEqual(ok);
    const file = path.join(tmpdir(), `${stack.testDb.name}.jsonl`);
    await writeFile(file, exported.stdout);
    try {
      for (const table of ['thread_events', 'threads', 'runs']) {
        await stack.orchestratorDb.sql.run(`delete from orchestrator.${table} where thread_id = ?`, [threadId]);
      }
      expect(await stack.events(TENANT, threadId)).toEqual([]);
      expect(await ratchet(['import', file], stack.env)).toEqual(ok);
      expect(await stack.events(TENANT, threadId)).toEqual(before);
      expect(await ratchet(['replay', threadId, '--verify'], stack.env)).toEqual(ok);
    } finally {
      await rm(file, { force: true });
    }
  });
});
