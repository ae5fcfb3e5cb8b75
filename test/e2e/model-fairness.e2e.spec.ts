import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { FakeModelServer } from '@ratchet/testing';
import { terminal, TestStack } from './stack';

/*
 * Fairness between tenants for model calls (docs/flow-control.md#fairness-between-tenants): tenant
 * "flood" queues its runs, then tenant "acme" starts a few; acme's runs are served within a bound, not
 * after the flood's queue. The facts compared are positions in the log (its global commit order): how
 * many of the flood's model calls were answered while acme's runs went, and how many were still to come.
 */

jest.setTimeout(300_000);

const model = new FakeModelServer();
let agentsDir: string;
let baseUrl: string;

beforeAll(async () => {
  baseUrl = await model.start();
  agentsDir = mkdtempSync(path.join(tmpdir(), 'ratchet-model-fairness-'));
  writeFileSync(
    path.join(agentsDir, 'answers.yaml'),
    `name: answers\nmodel:\n  provider: openai\n  name: fake-1\n  baseUrl: ${baseUrl}\nstepTimeoutSeconds: 60\n`,
  );
});
afterAll(async () => {
  await model.stop();
});

const request = (requestId: string, latencyMs: number) => ({
  requestId,
  agent: 'answers',
  input: [{ role: 'user' as const, content: `${requestId} [latency=${latencyMs}]` }],
  principal: { id: 'alice', roles: [] },
});

/** Publishes the flood's requests straight on NATS, fifty at a time. */
async function flood(stack: TestStack, count: number, latencyMs: number): Promise<string[]> {
  const js = stack.nc.jetstream();
  const ids = Array.from({ length: count }, (_, i) => `flood-${i}`);
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      ids.slice(i, i + 50).map((id) =>
        js.publish(`${stack.prefix.subject}.requests.flood`, JSON.stringify(request(id, latencyMs)), {
          msgID: `flood:${id}`,
        }),
      ),
    );
  }
  return ids;
}

/** What the log says of acme's runs against the flood's model calls. */
async function positions(stack: TestStack) {
  const sql = stack.orchestratorDb.sql;
  const events = sql.table('thread_events');
  const [acme] = await sql.query<{ first: string; done: string }>(
    `select min(position) filter (where type = 'run.requested')::text as first,
            max(position) filter (where type = 'run.completed')::text as done
       from ${events} where tenant_id = 'acme'`,
  );
  const [answers] = await sql.query<{ during: number; after: number; total: number }>(
    `select count(*) filter (where position > ?::bigint and position < ?::bigint)::int as during,
            count(*) filter (where position > ?::bigint)::int as after, count(*)::int as total
       from ${events} where tenant_id = 'flood' and type = 'model.responded'`,
    [acme!.first, acme!.done, acme!.done],
  );
  return answers!;
}

async function allCompleted(stack: TestStack, tenant: string, ids: string[]): Promise<void> {
  const logs = await Promise.all(
    ids.map((id) => stack.waitFor(tenant, threadIdFor(tenant, id), terminal(runIdFor(tenant, id)), 240_000)),
  );
  for (const events of logs) expect(events.at(-1)?.type).toBe('run.completed');
}

/**
 * Waits for a tenant's runs to end by one count a quarter second (not a poll per thread: the fake server
 * shares this process, and its arrival times must not lag behind the requests), then expects them all
 * completed.
 */
async function countCompleted(stack: TestStack, tenant: string, count: number): Promise<void> {
  const sql = stack.orchestratorDb.sql;
  const ended = async () =>
    sql.query<{ status: string; n: number }>(
      `select status, count(*)::int as n from ${sql.table('runs')}
        where tenant_id = ? and status not in ('queued', 'running') group by status`,
      [tenant],
    );
  const deadline = Date.now() + 240_000;
  while ((await ended()).reduce((n, r) => n + r.n, 0) < count && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 250));
  expect(await ended()).toEqual([{ status: 'completed', n: count }]);
}

describe('under a provider limit: a tenant with 500 runs queued, then another starts 5', () => {
  const LIMIT = 40;
  const WINDOW_MS = 1_000;
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await stack.start('orchestrator', {
      AGENTS_DIR: agentsDir,
      OPENAI_API_KEY: 'sk-fake',
      MODEL_LIMITS: JSON.stringify([
        { name: 'fake', baseUrl, apiKeyEnv: 'OPENAI_API_KEY', requests: LIMIT, windowSeconds: WINDOW_MS / 1000 },
      ]),
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("serves the other tenant's runs while the flood makes at most three windows' worth of calls, not after its queue", async () => {
    const floodIds = await flood(stack, 500, 50);
    // The flood holds its window's worth of reservations: its further calls wait for their share.
    const sql = stack.orchestratorDb.sql;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [row] = await sql.query<{ n: number }>(
        `select count(*)::int as n from ${sql.table('thread_events')}
          where tenant_id = 'flood' and type = 'model.requested' and data->'waitFor'->>'bound' = 'share'`,
      );
      if (row!.n > 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const acmeIds = Array.from({ length: 5 }, (_, i) => `acme-${i}`);
    for (const id of acmeIds) await stack.publishRequest('acme', request(id, 50));
    await allCompleted(stack, 'acme', acmeIds);
    await countCompleted(stack, 'flood', floodIds.length);

    const { during, after, total } = await positions(stack);
    console.log(
      `model fairness under a limit: flood answers while acme ran ${during}, after ${after} of ${total}; ` +
        `share waits ${await shareWaits(stack)}; requests the provider saw ${model.arrivals().length}`,
    );
    // The bound: behind at most the window the flood had booked and the calls it had in flight.
    expect(during).toBeLessThanOrEqual(3 * LIMIT);
    // Not after the flood's queue: most of its calls were answered after acme's runs were over.
    expect(after).toBeGreaterThanOrEqual(200);
    expect(total).toBe(500);
    // And the provider never saw more than the limit in a window, fairness or not.
    expect(model.maxInWindow(WINDOW_MS)).toBeLessThanOrEqual(LIMIT);
  });
});

async function shareWaits(stack: TestStack): Promise<number> {
  const sql = stack.orchestratorDb.sql;
  const [row] = await sql.query<{ n: number }>(
    `select count(*)::int as n from ${sql.table('thread_events')}
      where type = 'model.requested' and data->'waitFor'->>'bound' = 'share'`,
  );
  return row!.n;
}

describe('through the bus: two orchestrators with two model-call slots each, a tenant floods slow calls', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    const env = { AGENTS_DIR: agentsDir, OPENAI_API_KEY: 'sk-fake', MODEL_LOCAL_CALLS: '0', MODEL_CONCURRENCY: '2' };
    await stack.start('orchestrator', env, 'orchestrator-a');
    await stack.start('orchestrator', env, 'orchestrator-b');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("serves the other tenant's calls at the next free slot, and a deferred call is not an attempt", async () => {
    const floodIds = await flood(stack, 80, 300);
    const sql = stack.orchestratorDb.sql;
    const deadline = Date.now() + 60_000;
    // The flood's calls fill the slots and wait behind them.
    while ((await positions(stack).catch(() => ({ total: 0 }))).total < 4 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const acmeIds = Array.from({ length: 3 }, (_, i) => `acme-${i}`);
    for (const id of acmeIds) await stack.publishRequest('acme', request(id, 0));
    await allCompleted(stack, 'acme', acmeIds);
    await countCompleted(stack, 'flood', floodIds.length);

    const { during, after, total } = await positions(stack);
    expect(total).toBe(80);
    // First come, first served would have answered nearly all the flood's calls before acme's.
    expect(after).toBeGreaterThanOrEqual(40);
    // Waiting in a line, deferred to the other orchestrator and back: every call was made once, attempt 1.
    const [attempts] = await sql.query<{ retried: number; resumed: number }>(
      `select count(*) filter (where type = 'model.requested' and (data->>'attempt')::int > 1)::int as retried,
              count(*) filter (where type = 'run.resumed')::int as resumed
         from ${sql.table('thread_events')}`,
    );
    expect(attempts).toEqual({ retried: 0, resumed: 0 });
    console.log(`model fairness through the bus: flood answers while acme ran ${during}, after ${after} of ${total}`);
  });
});
