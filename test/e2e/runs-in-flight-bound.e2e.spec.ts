import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { watchInFlight } from './in-flight-watcher';
import { terminal, TestStack } from './stack';

/*
 * The tenant's bound on runs in flight is exact (ADR 0045): requests decided at the same moment — in one
 * group commit, or on two orchestrators — no longer all see the same count. Fifteen requests published
 * back to back against a bound of ten: exactly ten start, five are refused (retryable) — or, with
 * TENANT_RUNS_OVER_BOUND=queue, five wait for admission and start as runs end, also after the orchestrator
 * that held them is killed, never more than ten in flight.
 */

const AGENTS = path.resolve(__dirname, '../agents/loop');
const BOUND = 10;
const BURST = 15;

/** Publishes the burst back to back: every request is on the stream before the first is decided. */
async function publishBurst(stack: TestStack, tenant: string): Promise<string[]> {
  const ids = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
  const js = stack.nc.jetstream();
  await Promise.all(
    ids.map((id) =>
      js.publish(
        `${stack.prefix.subject}.requests.${tenant}`,
        JSON.stringify({
          requestId: id,
          agent: 'slow',
          input: [{ role: 'user', content: 'hello' }],
          principal: { id: 'alice', roles: ['runner'] },
        }),
        { msgID: `${tenant}:${id}` },
      ),
    ),
  );
  return ids;
}

describe(`a burst of ${BURST} run requests against a bound of ${BOUND} runs in flight, two orchestrators`, () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    const env = { AGENTS_DIR: AGENTS, TENANT_MAX_ACTIVE_RUNS: String(BOUND) };
    await Promise.all([
      stack.start('orchestrator', env, 'orchestrator-a'),
      stack.start('orchestrator', env, 'orchestrator-b'),
      stack.start('tool-executor'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('starts exactly the bound and refuses the rest, retryable; the started ones complete', async () => {
    const ids = await publishBurst(stack, 'busy');
    const decided = await Promise.all(
      ids.map((id) =>
        stack.waitFor('busy', threadIdFor('busy', id), (events) =>
          events.some((e) => e.type === 'run.started' || e.type === 'run.rejected'),
        ),
      ),
    );
    const started = decided.filter((events) => events.some((e) => e.type === 'run.started'));
    const refused = decided.filter((events) => events.some((e) => e.type === 'run.rejected'));
    expect([started.length, refused.length]).toEqual([BOUND, BURST - BOUND]);
    for (const events of refused)
      expect(events.find((e) => e.type === 'run.rejected')?.data).toMatchObject({
        error: { code: 'tenant.runs_limit', retryable: true },
      });
    const ends = await Promise.all(
      started.map((events) => {
        const requestId = (events.find((e) => e.type === 'run.requested')!.data as { requestId: string }).requestId;
        return stack.waitFor('busy', threadIdFor('busy', requestId), terminal(runIdFor('busy', requestId)), 60_000);
      }),
    );
    for (const events of ends) expect(events.at(-1)?.type).toBe('run.completed');
  });
});

describe(`the same burst with TENANT_RUNS_OVER_BOUND=queue: the rest wait for admission, through a SIGKILL`, () => {
  const TENANT = 'queued';
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    const env = {
      AGENTS_DIR: AGENTS,
      TENANT_MAX_ACTIVE_RUNS: String(BOUND),
      TENANT_RUNS_OVER_BOUND: 'queue',
      ADMISSION_PASS_MS: '200',
    };
    await Promise.all([
      stack.start('orchestrator', env, 'orchestrator-a'),
      stack.start('orchestrator', env, 'orchestrator-b'),
      stack.start('tool-executor'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('starts exactly the bound, queues the rest, and starts every queued run as room frees, never past the bound', async () => {
    // An outside reader of what the bound counts, the committed runs rows: the most seen at once.
    const watcher = watchInFlight(stack, TENANT);
    const sql = stack.orchestratorDb.sql;

    const ids = await publishBurst(stack, TENANT);
    const decided = await Promise.all(
      ids.map((id) =>
        stack.waitFor(TENANT, threadIdFor(TENANT, id), (events) =>
          events.some((e) => e.type === 'run.started' || e.type === 'run.queued' || e.type === 'run.rejected'),
        ),
      ),
    );
    const first = (events: (typeof decided)[number]) =>
      events.find((e) => e.type === 'run.started' || e.type === 'run.queued' || e.type === 'run.rejected')!;
    const queued = decided.filter((events) => first(events).type === 'run.queued');
    expect(decided.filter((events) => first(events).type === 'run.started')).toHaveLength(BOUND);
    expect(queued).toHaveLength(BURST - BOUND);
    for (const events of queued)
      expect(first(events).data).toEqual({
        requestId: expect.any(String),
        waitingFor: { bound: 'tenant.runs_limit', limit: BOUND },
      });
    // A queued run says why it waits, and is not counted in flight.
    const held = queued[0]!.find((e) => e.type === 'run.queued')!;
    const [row] = await sql.query<{ status: string; waiting_on: string | null; waiting_for: string | null }>(
      `select status, waiting_on, waiting_for from ${sql.table('runs')} where tenant_id = ? and run_id = ?`,
      [TENANT, held.runId],
    );
    expect(row).toEqual({
      status: 'queued',
      waiting_on: 'admission',
      waiting_for: `the tenant's bound of ${BOUND} runs in flight`,
    });

    // One of the two orchestrators dies while the first ten are in their model call and five wait.
    await stack.services.get('orchestrator-a')?.kill('SIGKILL');

    const ends = await Promise.all(
      ids.map((id) => stack.waitFor(TENANT, threadIdFor(TENANT, id), terminal(runIdFor(TENANT, id)), 120_000)),
    );
    const { most } = await watcher.stop();
    for (const events of ends) expect(events.at(-1)?.type).toBe('run.completed');
    // Every queued run started only after it waited: admitted, never refused.
    for (const events of ends) expect(events.some((e) => e.type === 'run.rejected')).toBe(false);
    for (const events of queued) {
      const runId = events.find((e) => e.type === 'run.queued')!.runId;
      const all = ends.find((x) => x.some((e) => e.runId === runId))!;
      expect(all.map((e) => e.type).filter((t) => t.startsWith('run.'))).toEqual(
        expect.arrayContaining(['run.requested', 'run.queued', 'run.started', 'run.completed']),
      );
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BOUND);
  });
});
