import path from 'node:path';
import { headers as natsHeaders } from 'nats';
import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/loop');
const principal = { id: 'alice', roles: ['runner'] };
const ask = (requestId: string, agent: string) => ({
  requestId,
  agent,
  input: [{ role: 'user' as const, content: 'What is the weather in Oslo and Rome?' }],
  principal,
});
const modelRequested = (events: ThreadEvent[]) =>
  events
    .filter((e) => e.type === 'model.requested')
    .map((e) => e.data as { step: number; attempt: number; retryReason?: string });

/**
 * The orchestrator runs the model calls it commits itself (ADR 0008): the command is a leased outbox
 * row, never published while the lease is renewed, marked sent once the result is committed. The
 * SIGKILL case (the lease runs out, a sweeper publishes the row, a bus worker retries it as attempt 2)
 * is in run-loop.e2e ("during a model call").
 */
describe('model calls run by the orchestrator that committed them', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator', { AGENTS_DIR: AGENTS }), stack.start('tool-executor')]);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Deliveries of model-call commands to the bus model workers (the `model-worker` consumer's sequence). */
  const modelCommandsOnBus = () => stack.deliveredTo(`${stack.prefix.subject}.cmd.model.${TENANT}`, 'model-worker');
  const unsentModelRows = async (): Promise<number> => {
    const rows = await stack.orchestratorDb.sql.query<{ n: number }>(
      `select count(*)::int as n from ${stack.orchestratorDb.sql.table('outbox')}
       where sent_at is null and headers->>'Ratchet-Message-Type' = 'model.call'`,
    );
    return rows[0]?.n ?? 0;
  };
  const settle = async (check: () => Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  };

  it('sends no model-call command through the bus and marks its outbox row sent once the result is committed', async () => {
    const before = await modelCommandsOnBus();
    await stack.publishRequest(TENANT, ask('local-1', 'demo'));
    const events = await stack.waitFor(TENANT, threadIdFor(TENANT, 'local-1'), terminal(runIdFor(TENANT, 'local-1')));
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(modelRequested(events).map((m) => m.attempt)).toEqual([1, 1]);
    await settle(async () => (await unsentModelRows()) === 0);
    expect(await unsentModelRows()).toBe(0);
    expect(await modelCommandsOnBus()).toBe(before);
    // Each call's row names how many messages its conversation had, instead of holding them all again: a
    // worker that takes a call over reads them from the thread (the SIGKILL cases below and in run-loop).
    const rows = await stack.orchestratorDb.sql.query<{ inline: boolean; counted: number | null }>(
      `select payload->'messages' is not null as inline, (payload->'transcript'->>'messages')::int as counted
         from ${stack.orchestratorDb.sql.table('outbox')}
        where headers->>'Ratchet-Message-Type' = 'model.call' and payload->>'threadId' = ?
        order by created_at`,
      [threadIdFor(TENANT, 'local-1')],
    );
    expect(rows).toEqual([
      { inline: false, counted: 1 },
      { inline: false, counted: 4 },
    ]);
  });

  it('renews the lease of a call that outlasts it: no second attempt while the process lives', async () => {
    // `slow` answers after 4 s; the lease is the stack's ack wait, 2 s.
    const before = await modelCommandsOnBus();
    await stack.publishRequest(TENANT, ask('local-slow', 'slow'));
    const events = await stack.waitFor(
      TENANT,
      threadIdFor(TENANT, 'local-slow'),
      terminal(runIdFor(TENANT, 'local-slow')),
      60_000,
    );
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(modelRequested(events)).toEqual([
      expect.objectContaining({ step: 1, attempt: 1 }),
      expect.objectContaining({ step: 2, attempt: 1 }),
    ]);
    expect(events.filter((e) => e.type === 'model.responded')).toHaveLength(2);
    expect(events.some((e) => e.type === 'run.resumed')).toBe(false);
    expect(await modelCommandsOnBus()).toBe(before);
  });

  it('SIGKILL after the result committed, before the row was marked sent: the model is called once more, its result is a duplicate', async () => {
    await stack.outboxSettled();
    await stack.services.get('orchestrator')?.kill('SIGKILL');
    const victim = await stack.start('orchestrator', {
      AGENTS_DIR: AGENTS,
      RATCHET_FAILPOINTS: 'orchestrator.local-model.before-mark@1',
    });
    const before = await modelCommandsOnBus();
    await stack.publishRequest(TENANT, ask('local-kill', 'demo'));
    expect((await victim.exited).signal).toBe('SIGKILL');
    await stack.start('orchestrator', { AGENTS_DIR: AGENTS });
    const thread = threadIdFor(TENANT, 'local-kill');
    const events = await stack.waitFor(TENANT, thread, terminal(runIdFor(TENANT, 'local-kill')));
    expect(events.at(-1)?.type).toBe('run.completed');
    // The row was still unsent: once its lease ran out a sweeper published it and a bus worker called the
    // model again. Its result carries the id the committed one had: the inbox drops it.
    await settle(async () => (await modelCommandsOnBus()) > before && (await unsentModelRows()) === 0, 20_000);
    expect(await modelCommandsOnBus()).toBeGreaterThan(before);
    expect(await unsentModelRows()).toBe(0);
    await new Promise((r) => setTimeout(r, 1_000));
    const after = await stack.events(TENANT, thread);
    expect(after).toHaveLength(events.length);
    expect(modelRequested(after).map((m) => [m.step, m.attempt])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(after.filter((e) => e.type === 'model.responded')).toHaveLength(2);
    expect(after.filter((e) => e.type === 'tool.completed')).toHaveLength(2);
    expect(after.map((e) => e.version)).toEqual(after.map((_, i) => i + 1));
  });

  it('a copy published while the call runs here, then SIGKILL: the copy waits out the lease and is retried, not dropped', async () => {
    // What a pause of the holder past its lease leaves: a sweeper published the row and marked it sent,
    // then the holder renewed its lapsed lease (nobody had taken it). If the holder dies now, that copy
    // is the only way back for the call (no sweeper publishes a sent row again): acked as "held
    // elsewhere", the run would wait for the watchdog's lost-call bound (10 minutes).
    await stack.outboxSettled();
    const thread = threadIdFor(TENANT, 'local-copy');
    await stack.publishRequest(TENANT, ask('local-copy', 'slow'));
    const outbox = stack.orchestratorDb.sql.table('outbox');
    type Row = { id: string; subject: string; headers: Record<string, string>; payload: unknown; leased_by: string };
    let row: Row | undefined;
    await settle(async () => {
      [row] = await stack.orchestratorDb.sql.query<Row>(
        `select id, subject, headers, payload, leased_by from ${outbox}
          where payload->>'threadId' = ? and headers->>'Ratchet-Message-Type' = 'model.call' and sent_at is null`,
        [thread],
      );
      return row !== undefined;
    });
    if (!row) throw new Error('the model call of local-copy was never committed');
    // The slow model answers after 4 s: the copy below is published, delivered and settled well before.
    const before = await modelCommandsOnBus();
    const h = natsHeaders();
    for (const [k, v] of Object.entries(row.headers)) h.set(k, v);
    h.set('Ratchet-Lease-Expired', '1');
    await stack.nc.jetstream().publish(row.subject, JSON.stringify(row.payload), { msgID: row.id, headers: h });
    await stack.orchestratorDb.sql.run(`update ${outbox} set sent_at = now() where id = ?`, [row.id]);
    await settle(async () => (await modelCommandsOnBus()) > before, 3_000);
    await new Promise((r) => setTimeout(r, 300));
    const holder = stack.services.get(row.leased_by);
    expect(holder).toBeDefined();
    await holder?.kill('SIGKILL');
    await stack.start('orchestrator', { AGENTS_DIR: AGENTS });
    const events = await stack.waitFor(TENANT, thread, terminal(runIdFor(TENANT, 'local-copy')), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    const step1 = modelRequested(events).filter((m) => m.step === 1);
    expect(step1.map((m) => m.attempt)).toEqual([1, 2]);
    expect(step1[1]?.retryReason).toContain('redelivered');
    expect(events.filter((e) => e.type === 'model.responded')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(2);
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
  });

  it('with MODEL_LOCAL_CALLS=0 every model call goes through the bus, and the run is the same', async () => {
    await stack.services.get('orchestrator')?.kill('SIGTERM');
    await stack.start('orchestrator', { AGENTS_DIR: AGENTS, MODEL_LOCAL_CALLS: '0' });
    const before = await modelCommandsOnBus();
    await stack.publishRequest(TENANT, ask('bus-1', 'demo'));
    const events = await stack.waitFor(TENANT, threadIdFor(TENANT, 'bus-1'), terminal(runIdFor(TENANT, 'bus-1')));
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(modelRequested(events).map((m) => m.attempt)).toEqual([1, 1]);
    expect(await modelCommandsOnBus()).toBe(before + 2);
    await settle(async () => (await unsentModelRows()) === 0);
    expect(await unsentModelRows()).toBe(0);
  });
});
