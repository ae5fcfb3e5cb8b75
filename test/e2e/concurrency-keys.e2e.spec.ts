import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { watchInFlight } from './in-flight-watcher';
import { terminal, TestStack } from './stack';

/*
 * Concurrency keys (ADR 0045): the agent `keyed` allows at most 2 runs in flight per customer
 * (`slots: [{ name: customer, key: metadata.customerId, max: 2 }]`), and the tenant at most 3 runs in flight
 * in all, queueing past it (so both bounds hold runs back). One customer asks for six runs, then two others for two each. Two
 * orchestrators; one is SIGKILLed while runs go and others wait. An outside reader of the committed runs
 * rows counts the runs in flight per key the whole time.
 */

const AGENTS = path.resolve(__dirname, '../agents/keys');
const TENANT = 'keys';
const MAX_PER_KEY = 2;
const TENANT_BOUND = 3;

const ASKS = [
  ...['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((id) => ({ id, customer: 'alpha' })),
  ...['b1', 'b2'].map((id) => ({ id, customer: 'beta' })),
  ...['c1', 'c2'].map((id) => ({ id, customer: 'gamma' })),
];

const cli = sourceCommand('apps/cli/src/main.ts');
const ratchet = (stack: TestStack, args: string[]) =>
  runProcess(cli.command, [...cli.args, ...args], { ...cli.env, ...stack.env });

/** The asks, one after another in order: alpha's six first, then beta's and gamma's. */
async function askAll(stack: TestStack): Promise<void> {
  for (const { id, customer } of ASKS)
    await stack.publishRequest(TENANT, {
      requestId: id,
      agent: 'keyed',
      input: [{ role: 'user', content: 'hello' }],
      principal: { id: 'alice', roles: ['runner'] },
      metadata: { customerId: customer },
    });
}

describe('concurrency keys per customer, round-robin across keys, under a SIGKILL', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    const env = {
      AGENTS_DIR: AGENTS,
      TENANT_MAX_ACTIVE_RUNS: String(TENANT_BOUND),
      TENANT_RUNS_OVER_BOUND: 'queue',
      ADMISSION_PASS_MS: '200',
    };
    await Promise.all([
      stack.start('orchestrator', env, 'orchestrator-a'),
      stack.start('orchestrator', env, 'orchestrator-b'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('never has more than a key (or the tenant) allows in flight, and starts every queued run, through a SIGKILL', async () => {
    const watcher = watchInFlight(stack, TENANT);

    // In order: alpha's six first, then beta's and gamma's.
    await askAll(stack);
    const thread = (id: string) => threadIdFor(TENANT, id);
    const firstDecided = await Promise.all(
      ASKS.map(({ id }) =>
        stack.waitFor(TENANT, thread(id), (events) =>
          events.some((e) => e.type === 'run.started' || e.type === 'run.queued'),
        ),
      ),
    );
    const queued = firstDecided.filter((events) => events.some((e) => e.type === 'run.queued'));
    expect(queued.length).toBeGreaterThanOrEqual(ASKS.length - TENANT_BOUND);

    // One orchestrator dies while runs go and others wait; the other carries on.
    await stack.services.get('orchestrator-a')?.kill('SIGKILL');

    const ends = await Promise.all(
      ASKS.map(({ id }) => stack.waitFor(TENANT, thread(id), terminal(runIdFor(TENANT, id)), 120_000)),
    );
    const seen = await watcher.stop();
    for (const events of ends) expect(events.at(-1)?.type).toBe('run.completed');

    // Never more than a key allows, nor the tenant's bound, in flight at once.
    expect([...seen.mostPerKey.keys()].sort()).toEqual(['customer=alpha', 'customer=beta', 'customer=gamma']);
    for (const n of seen.mostPerKey.values()) expect(n).toBeLessThanOrEqual(MAX_PER_KEY);
    expect(seen.most).toBeLessThanOrEqual(TENANT_BOUND);

    // Alpha's key held its runs back, not only the tenant's bound.
    expect(seen.mostPerKey.get('customer=alpha')).toBe(MAX_PER_KEY);

    // A queued run says what it waited for.
    const waitedFor = queued.map((events) => events.find((e) => e.type === 'run.queued')!.data);
    expect(waitedFor).toContainEqual(
      expect.objectContaining({ waitingFor: expect.objectContaining({ bound: expect.stringMatching(/slot|tenant/) }) }),
    );
  });

  it('refuses a request whose metadata lacks the key, naming the slot and the field, and starts nothing', async () => {
    const replyTo = `${stack.prefix.subject}.test.outcome.${Date.now()}`;
    const outcome = stack.nc.subscribe(replyTo, { max: 1 });
    await stack.publishRequest(TENANT, {
      requestId: 'no-customer',
      agent: 'keyed',
      input: [{ role: 'user', content: 'hello' }],
      principal: { id: 'alice', roles: ['runner'] },
      metadata: { org: 'acme' },
      replyTo,
    });
    for await (const m of outcome)
      expect(m.json()).toMatchObject({
        status: 'rejected',
        error: {
          code: 'request.slot_key_missing',
          message: expect.stringContaining('per metadata.customerId (slot "customer", at most 2 at once)'),
          retryable: false,
        },
      });
    const [row] = await stack.orchestratorDb.sql.query<{ n: number }>(
      `select count(*)::int as n from ${stack.orchestratorDb.sql.table('runs')} where tenant_id = ? and request_id = ?`,
      [TENANT, 'no-customer'],
    );
    expect(row?.n).toBe(0);
  });

  it("holds a tenant to the max an operator set for it, leaves other tenants at the agent's, and goes back on unset", async () => {
    const ask = (tenant: string, id: string) =>
      stack.publishRequest(tenant, {
        requestId: id,
        agent: 'keyed',
        input: [{ role: 'user', content: 'hello' }],
        principal: { id: 'alice', roles: ['runner'] },
        metadata: { customerId: 'delta' },
      });
    const requested = async (tenant: string, id: string) => {
      const events = await stack.waitFor(tenant, threadIdFor(tenant, id), (es) =>
        es.some((e) => e.type === 'run.requested'),
      );
      return events.find((e) => e.type === 'run.requested')!.data['slots'];
    };

    // Refused with the reason named, nothing written: a slot the agent does not declare, a max out of range.
    const unknownSlot = await ratchet(stack, [
      'agents',
      'limits',
      'set',
      'keyed',
      'org',
      '--tenant',
      TENANT,
      '--max',
      '1',
    ]);
    expect(unknownSlot).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('it declares customer (metadata.customerId, max 2)'),
    });
    expect(
      await ratchet(stack, ['agents', 'limits', 'set', 'keyed', 'customer', '--tenant', TENANT, '--max', '0']),
    ).toMatchObject({ code: 2 });
    expect(
      await ratchet(stack, ['agents', 'limits', 'set', 'nobody', 'customer', '--tenant', TENANT, '--max', '1']),
    ).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`tenant ${TENANT} has no agent nobody`),
    });

    expect(
      await ratchet(stack, ['agents', 'limits', 'set', 'keyed', 'customer', '--tenant', TENANT, '--max', '1']),
    ).toMatchObject({ code: 0 });
    const listed = await ratchet(stack, ['agents', 'limits', 'list', '--tenant', TENANT, '--json']);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      tenant: TENANT,
      agent: 'keyed',
      slot: 'customer',
      max: 1,
      declared: 2,
    });

    // Three runs of one customer: one at a time for this tenant; another tenant keeps the agent's 2.
    const watcher = watchInFlight(stack, TENANT);
    for (const id of ['d1', 'd2', 'd3']) await ask(TENANT, id);
    await ask('keys-other', 'o1');
    const ends = await Promise.all(
      ['d1', 'd2', 'd3'].map((id) =>
        stack.waitFor(TENANT, threadIdFor(TENANT, id), terminal(runIdFor(TENANT, id)), 120_000),
      ),
    );
    const seen = await watcher.stop();
    for (const events of ends) expect(events.at(-1)?.type).toBe('run.completed');
    expect(seen.mostPerKey.get('customer=delta')).toBe(1);
    expect(await requested(TENANT, 'd1')).toEqual([{ key: 'customer=delta', max: 1 }]);
    expect(await requested('keys-other', 'o1')).toEqual([{ key: 'customer=delta', max: 2 }]);
    const waited = ends.flatMap((events) =>
      events.filter((e) => e.type === 'run.queued').map((e) => e.data['waitingFor']),
    );
    expect(waited).toContainEqual({ bound: 'slot', key: 'customer=delta', limit: 1 });

    // Unset: the agent's max applies again to the runs requested after.
    expect(await ratchet(stack, ['agents', 'limits', 'unset', 'keyed', 'customer', '--tenant', TENANT])).toMatchObject({
      code: 0,
    });
    await ask(TENANT, 'd4');
    expect(await requested(TENANT, 'd4')).toEqual([{ key: 'customer=delta', max: 2 }]);
  });
});

describe('round-robin across keys: one customer asks first and most, the others are not served after it', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    // One run at a time for the tenant: who goes next is all the queue decides.
    await stack.start('orchestrator', {
      AGENTS_DIR: AGENTS,
      TENANT_MAX_ACTIVE_RUNS: '1',
      TENANT_RUNS_OVER_BOUND: 'queue',
      ADMISSION_PASS_MS: '100',
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("takes the keys in turn: beta's and gamma's runs go between alpha's, not after all of them", async () => {
    await askAll(stack);
    const ends = await Promise.all(
      ASKS.map(({ id }) => stack.waitFor(TENANT, threadIdFor(TENANT, id), terminal(runIdFor(TENANT, id)), 120_000)),
    );
    for (const events of ends) expect(events.at(-1)?.type).toBe('run.completed');
    const startedAt = new Map(
      ends.map((events, i) => [ASKS[i]!.id, Date.parse(events.find((e) => e.type === 'run.started')!.at)]),
    );
    // Whose run started, in the order they started (the requests of different threads are decided
    // concurrently, so which of a customer's runs goes first is not fixed; whose turn it is, is).
    const order = [...startedAt.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id[0]);
    // First come, first served would be alpha's six, then beta's and gamma's. In turn, once a run of each key
    // went, a key's next run waits for the keys served longer ago: all four of beta's and gamma's start
    // before alpha's fourth, and alpha's last runs go when nobody else is waiting.
    const alphaFourth = order.map((k, i) => (k === 'a' ? i : -1)).filter((i) => i >= 0)[3]!;
    expect(order.slice(0, alphaFourth).filter((k) => k !== 'a')).toHaveLength(4);
    expect(order.slice(-2)).toEqual(['a', 'a']);
  });
});
