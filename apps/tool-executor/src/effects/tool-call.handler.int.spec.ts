import type { JetStreamManager, NatsConnection } from 'nats';
import { z } from 'zod';
import {
  connectNats,
  declareTopology,
  deleteTopology,
  EffectLedgerRepository,
  ensureTopology,
  JetStreamPublisher,
  openServiceDatabase,
  PgOutboxStore,
  type Database,
  type MessagePublisher,
} from '@ratchet/adapters';
import { subjects, type ToolCallCommand, type ToolResultMessage } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import { createLogger, OutboxRelay, RunStops } from '@ratchet/platform';
import { createTestDatabase, newThreadRef, uniquePrefix, type TestDatabase } from '@ratchet/testing';
import { defineTool, ToolRegistry, type AnyTool } from '@ratchet/tools';
import { EffectLeases } from './effect-leases';
import { ToolCallHandler } from './tool-call.handler';

jest.setTimeout(30_000);

// The pg client class MikroORM's pool uses (no type declarations are installed for `pg`).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Client } = require('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };

/*
 * The executor's ledger discipline per tool kind, against real Postgres and JetStream: what is in the
 * ledger while the tool acts, which statements one call sends, what is published.
 */

const prefix = uniquePrefix();
const topology = declareTopology({ subjectPrefix: prefix.subject, streamPrefix: prefix.stream });
const subs = subjects(prefix.subject);

let testDb: TestDatabase;
let db: Database;
let nc: NatsConnection;
let jsm: JetStreamManager;
let relay: OutboxRelay;
let handler: ToolCallHandler;
const published: { subject: string; msgId: string; payload: ToolResultMessage }[] = [];

/** Executions per key, and the ledger row each execution saw while it ran. */
const runs = new Map<string, number>();
const seenWhileRunning = new Map<string, (string | undefined)[]>();
async function observe(key: string): Promise<number> {
  // Marked, so statementsOf leaves the tool's own query out.
  const rows = await db.sql.query<{ state: string }>(
    `/* the tool */ select state from ${db.sql.table('effects')} where key = ?`,
    [key],
  );
  seenWhileRunning.set(key, [...(seenWhileRunning.get(key) ?? []), rows[0]?.state]);
  const n = (runs.get(key) ?? 0) + 1;
  runs.set(key, n);
  return n;
}
const pureRead = defineTool({
  name: 'test.read',
  description: 'A pure read that says which execution of its key it was.',
  kind: 'pure',
  input: z.object({}),
  async execute(_args, ctx) {
    return { execution: await observe(ctx.idempotencyKey) };
  },
});
/** A slow at-most-once call that waits for its signal (or 10 s), counting arrivals and aborts. */
const slowStarts = new Map<string, number>();
const slowAborts = new Map<string, number>();
async function slowly(ctx: { idempotencyKey: string; signal: AbortSignal }, ms: number): Promise<void> {
  slowStarts.set(ctx.idempotencyKey, (slowStarts.get(ctx.idempotencyKey) ?? 0) + 1);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    ctx.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      slowAborts.set(ctx.idempotencyKey, (slowAborts.get(ctx.idempotencyKey) ?? 0) + 1);
      reject(new Error('aborted'));
    });
  });
}
const slowRead = defineTool({
  name: 'test.slow-read',
  description: 'A pure read that takes a while.',
  kind: 'pure',
  timeoutMs: 20_000,
  input: z.object({}),
  async execute(_args, ctx) {
    await slowly(ctx, 10_000);
    return { read: true };
  },
});
const slowCharge = defineTool({
  name: 'test.slow-charge',
  description: 'An at-most-once effect that takes a while.',
  kind: 'at-most-once',
  timeoutMs: 20_000,
  input: z.object({}),
  async execute(_args, ctx) {
    await slowly(ctx, 300);
    return { charged: true };
  },
});
/** An at-most-once effect that acts until the test lets it finish. */
let letGatedFinish: () => void = () => undefined;
const gatedStarts = new Map<string, number>();
const gatedCharge = defineTool({
  name: 'test.gated-charge',
  description: 'An at-most-once effect that finishes when told to.',
  kind: 'at-most-once',
  timeoutMs: 20_000,
  input: z.object({}),
  async execute(_args, ctx) {
    gatedStarts.set(ctx.idempotencyKey, (gatedStarts.get(ctx.idempotencyKey) ?? 0) + 1);
    await new Promise<void>((resolve) => (letGatedFinish = resolve));
    return { charged: 'by the late attempt' };
  },
});
/**
 * An idempotent write whose first execution acts until the test lets it finish, and whose second fails
 * the way a service that is down fails (TransientError: the message comes back later); later ones succeed.
 */
let letGatedUpsertFinish: () => void = () => undefined;
const gatedUpserts = new Map<string, number>();
const gatedUpsert = defineTool({
  name: 'test.gated-upsert',
  description: 'An idempotent write: held, then unavailable, then fine.',
  kind: 'idempotent',
  timeoutMs: 20_000,
  input: z.object({}),
  async execute(_args, ctx) {
    const n = (gatedUpserts.get(ctx.idempotencyKey) ?? 0) + 1;
    gatedUpserts.set(ctx.idempotencyKey, n);
    if (n === 1) await new Promise<void>((resolve) => (letGatedUpsertFinish = resolve));
    if (n === 2) throw new TransientError('the store is down', 'store.unavailable');
    return { written: n };
  },
});
/** An idempotent write that acts until the test lets it finish (one gate per key). */
const heldUpserts = new Map<string, () => void>();
const heldUpsert = defineTool({
  name: 'test.held-upsert',
  description: 'An idempotent write that finishes when told to.',
  kind: 'idempotent',
  timeoutMs: 20_000,
  input: z.object({}),
  async execute(_args, ctx) {
    await new Promise<void>((resolve) => heldUpserts.set(ctx.idempotencyKey, resolve));
    return { written: true };
  },
});
const upsert = defineTool({
  name: 'test.upsert',
  description: 'An idempotent write.',
  kind: 'idempotent',
  input: z.object({}),
  async execute(_args, ctx) {
    return { execution: await observe(ctx.idempotencyKey) };
  },
});

/**
 * The statements the handler sent to Postgres while `work` ran (the relay's background marking and the
 * tool's own query left out).
 */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const original = Client.prototype.query;
  Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text) sent.push(text.replace(/\s+/g, ' ').trim());
    return original.apply(this, args);
  };
  try {
    await work();
  } finally {
    Client.prototype.query = original;
  }
  return sent.filter(
    (s) =>
      !/^(set local synchronous_commit = off; )?update \S+\."outbox" set sent_at/.test(s) &&
      !s.startsWith('/* the tool */'),
  );
}

function call(tool: string): ToolCallCommand {
  const ref = newThreadRef();
  const runId = `run-${ref.threadId}`;
  return {
    kind: 'tool.call',
    commandId: `${runId}:tool:1:c1`,
    ...ref,
    runId,
    step: 1,
    callId: 'c1',
    tool,
    args: {},
    idempotencyKey: `${ref.tenantId}:${ref.threadId}:${runId}:1:c1`,
    principal: { id: 'alice', roles: [] },
  };
}

const outcomesSent = (c: ToolCallCommand) =>
  published.filter((p) => p.payload.callId === c.callId && p.payload.threadId === c.threadId);

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = await openServiceDatabase(testDb.url, 'tools');
  nc = await connectNats({ url: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222', name: 'tool-call-handler-int' });
  jsm = await nc.jetstreamManager();
  await ensureTopology(jsm, topology, []);
  const jetstream = new JetStreamPublisher(nc);
  const publisher: MessagePublisher = {
    async publish(subject, payload, opts) {
      const result = await jetstream.publish(subject, payload, opts);
      published.push({ subject, msgId: opts.msgId, payload: payload as ToolResultMessage });
      return result;
    },
  };
  relay = new OutboxRelay(new PgOutboxStore(db), publisher);
  handler = new ToolCallHandler(db, new ToolRegistry([pureRead, upsert] as AnyTool[]), relay, subs, {
    info: () => undefined,
    warn: () => undefined,
  });
  const logger = createLogger('tool-executor', 'silent', 'test');
  const control = (holder: string, claimAfterMs?: number) => ({
    stops: new RunStops(nc, subs, logger),
    leases: new EffectLeases(new EffectLedgerRepository(db.sql), { holder, leaseMs: 60_000 }, logger),
    ...(claimAfterMs === undefined ? {} : { claimAfterMs }),
  });
  const tools = new ToolRegistry([
    pureRead,
    upsert,
    slowCharge,
    slowRead,
    gatedCharge,
    gatedUpsert,
    heldUpsert,
  ] as AnyTool[]);
  const quiet = { info: () => undefined, warn: () => undefined };
  [executorA, executorB] = (['executor-a', 'executor-b'] as const).map((holder) => {
    const c = control(holder);
    return { handler: new ToolCallHandler(db, tools, relay, subs, quiet, {}, c), stops: c.stops };
  }) as [Executor, Executor];
  // Claims of idempotent calls deferred: by 1 s (a quick call never writes one), by 50 ms (a held one does).
  [deferring, deferringSoon] = (
    [
      ['executor-d', 1000],
      ['executor-e', 50],
    ] as const
  ).map(([holder, after]) => {
    const c = control(holder, after);
    return { handler: new ToolCallHandler(db, tools, relay, subs, quiet, {}, c), stops: c.stops };
  }) as [Executor, Executor];
});
let deferring: Executor;
let deferringSoon: Executor;
type Executor = { handler: ToolCallHandler; stops: RunStops };
let executorA: Executor;
let executorB: Executor;
afterAll(async () => {
  await relay?.stop();
  await deleteTopology(jsm, topology).catch(() => undefined);
  await nc?.close();
  await db?.close();
  await testDb?.drop();
});

describe('ToolCallHandler: pure tools record nothing before they act', () => {
  it('a first delivery runs the tool with no ledger row, then records outcome + result message in one statement', async () => {
    const c = call('test.read');
    let result: unknown;
    const statements = await statementsOf(async () => (result = await handler.handle(c, {}, 1)));
    expect(result).toBe('executed');
    // While the tool ran, the ledger held nothing for its key.
    expect(seenWhileRunning.get(c.idempotencyKey)).toEqual([undefined]);
    // One round trip to Postgres: the ledger row (already finished) and the outbox row together.
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^with e as \( insert into "tools"\."effects" .* insert into "tools"\."outbox"/);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      dedupHits: 0,
      kind: 'pure',
      result: { status: 'completed', result: { execution: 1 } },
    });
    // Published after the commit, on the thread's inbox subject, with the outbox row id.
    expect(outcomesSent(c)).toEqual([
      {
        subject: subs.inbox(c.tenantId, c.threadId),
        msgId: `${c.idempotencyKey}:result:completed`,
        payload: expect.objectContaining({ outcome: { status: 'completed', result: { execution: 1 } } }),
      },
    ]);
  });

  it('a redelivered pure command whose outcome is recorded re-sends the stored result without running again', async () => {
    const c = call('test.read');
    expect(await handler.handle(c, {}, 1)).toBe('executed');
    let result: unknown;
    const statements = await statementsOf(async () => (result = await handler.handle(c, {}, 2)));
    expect(result).toBe('dedup');
    expect(runs.get(c.idempotencyKey)).toBe(1);
    // The look-up, then the dedup hit and the resent message in one transaction.
    expect(statements[0]).toMatch(/^select .* from "tools"\."effects" where key = /);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      dedupHits: 1,
      result: { status: 'completed', result: { execution: 1 } },
    });
    const sent = outcomesSent(c);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.msgId).toMatch(new RegExp(`^${c.idempotencyKey}:result:completed:resend:`));
    // The same message (same messageId, same outcome): the orchestrator's inbox drops the second one.
    expect(sent[1]!.payload).toEqual(sent[0]!.payload);
  });

  it('a redelivered pure command with nothing recorded (its executor died mid-call) runs again and records once', async () => {
    const c = call('test.read');
    // The first delivery ran the tool and died before recording: nothing of it is in Postgres.
    await observe(c.idempotencyKey);
    expect(await handler.handle(c, {}, 2)).toBe('executed');
    expect(runs.get(c.idempotencyKey)).toBe(2);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      result: { status: 'completed', result: { execution: 2 } },
    });
    expect(outcomesSent(c).map((p) => p.payload.outcome)).toEqual([{ status: 'completed', result: { execution: 2 } }]);
  });

  it('the same call arriving in a new message after its outcome was recorded may run again; the stored result is the one re-sent', async () => {
    const c = call('test.read');
    expect(await handler.handle(c, {}, 1)).toBe('executed');
    // A first delivery (a re-send of the command past the duplicate window) does not read first.
    expect(await handler.handle(c, {}, 1)).toBe('dedup');
    expect(runs.get(c.idempotencyKey)).toBe(2);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      dedupHits: 1,
      result: { status: 'completed', result: { execution: 1 } },
    });
    expect(outcomesSent(c).map((p) => p.payload.outcome)).toEqual([
      { status: 'completed', result: { execution: 1 } },
      { status: 'completed', result: { execution: 1 } },
    ]);
  });

  it('a pure key left `started` by an earlier attempt is run again and finished with one more attempt', async () => {
    const c = call('test.read');
    const ledger = new EffectLedgerRepository(db.sql);
    expect(
      await ledger.recordStarted({ ...c, key: c.idempotencyKey, kind: 'pure', command: c, traceparent: undefined }),
    ).toBe('inserted');
    expect(await handler.handle(c, {}, 2)).toBe('retried');
    expect(await ledger.get(c.idempotencyKey)).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(outcomesSent(c)).toHaveLength(1);
  });
});

describe('ToolCallHandler: other tools keep `started` before they act', () => {
  it('an idempotent call (claims not deferred) commits `started` first, then outcome + result message', async () => {
    const c = call('test.upsert');
    let result: unknown;
    const statements = await statementsOf(async () => (result = await handler.handle(c, {}, 1)));
    expect(result).toBe('executed');
    expect(seenWhileRunning.get(c.idempotencyKey)).toEqual(['started']);
    expect(statements).toHaveLength(2);
    // The claim: `started` inserted unless the run is recorded stopped, one statement.
    expect(statements[0]).toMatch(/^with stopped as \( .* insert into "tools"\."effects" .* 'started'/);
    expect(statements[1]).toMatch(/^with u as \( update "tools"\."effects"/);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
    });
    // Redelivered after the outcome: re-sent from the ledger, not run.
    expect(await handler.handle(c, {}, 2)).toBe('dedup');
    expect(runs.get(c.idempotencyKey)).toBe(1);
  });
});

describe('ToolCallHandler: an idempotent call acts before its claim (claimAfterMs, ADR 0043)', () => {
  it('a call that ends sooner sends one statement: no row while it acts, then the row already finished with its result message', async () => {
    const c = call('test.upsert');
    let result: unknown;
    const statements = await statementsOf(async () => (result = await deferring.handler.handle(c, {}, 1)));
    expect(result).toBe('executed');
    expect(seenWhileRunning.get(c.idempotencyKey)).toEqual([undefined]);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^with e as \( insert into "tools"\."effects" .* insert into "tools"\."outbox"/);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      kind: 'idempotent',
      result: { status: 'completed', result: { execution: 1 } },
    });
    expect(outcomesSent(c)).toHaveLength(1);
    // Redelivered after the outcome: re-sent from the ledger, not run.
    expect(await deferring.handler.handle(c, {}, 2)).toBe('dedup');
    expect(runs.get(c.idempotencyKey)).toBe(1);
  });

  it('a call still acting after claimAfterMs gets its `started` row and lease while it acts: a second delivery leaves it alone; its outcome ends that claim', async () => {
    const c = call('test.held-upsert');
    const ledger = new EffectLedgerRepository(db.sql);
    const first = deferringSoon.handler.handle(c, {}, 1);
    await waitFor(() => heldUpserts.has(c.idempotencyKey));
    await waitFor(async () => (await ledger.get(c.idempotencyKey))?.state === 'started');
    expect(await ledger.get(c.idempotencyKey, 'executor-b')).toMatchObject({
      state: 'started',
      attempts: 1,
      leasedBy: 'executor-e',
      heldElsewhere: true,
    });
    // The watchdog re-sent the command: another executor sees the claim and leaves the call to its holder.
    expect(await executorB.handler.handle(c, {}, 1)).toBe('in-progress');
    heldUpserts.get(c.idempotencyKey)!();
    expect(await first).toBe('executed');
    expect(await ledger.get(c.idempotencyKey)).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(outcomesSent(c)).toHaveLength(1);
  });

  it('a delivery after the executor died mid-call (nothing recorded) claims `started` first, then runs with the same key', async () => {
    const c = call('test.upsert');
    let result: unknown;
    const statements = await statementsOf(async () => (result = await deferring.handler.handle(c, {}, 2)));
    expect(result).toBe('executed');
    expect(seenWhileRunning.get(c.idempotencyKey)).toEqual(['started']);
    expect(statements[0]).toMatch(/^with stopped as \( .* insert into "tools"\."effects" .* 'started'/);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
    });
  });

  it('a run recorded stopped that this process has not heard of: the call acts (nothing is read first), its claim writes nothing, and its real outcome is recorded', async () => {
    const c = call('test.held-upsert');
    const ledger = new EffectLedgerRepository(db.sql);
    await ledger.recordStoppedRun({ ...c, reason: 'cancelled by alice' });
    const acting = deferringSoon.handler.handle(c, {}, 1);
    await waitFor(() => heldUpserts.has(c.idempotencyKey));
    // Past claimAfterMs: the claim found the run stopped and wrote nothing.
    await new Promise((r) => setTimeout(r, 200));
    expect(await ledger.get(c.idempotencyKey)).toBeUndefined();
    heldUpserts.get(c.idempotencyKey)!();
    expect(await acting).toBe('executed');
    expect(await ledger.get(c.idempotencyKey)).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(outcomesSent(c).map((p) => p.payload.outcome.status)).toEqual(['completed']);
  });

  it('a run this process heard stopped: the call never starts', async () => {
    const c = call('test.upsert');
    deferring.stops.stop(c.tenantId, c.runId, 'interrupted');
    expect(await deferring.handler.handle(c, {}, 1)).toBe('cancelled');
    expect(runs.get(c.idempotencyKey)).toBeUndefined();
  });
});

describe('ToolCallHandler: a stopped run', () => {
  it('never starts a call of a run recorded stopped: the ledger says cancelled, the thread is told, no effect', async () => {
    const c = call('test.upsert');
    await new EffectLedgerRepository(db.sql).recordStoppedRun({ ...c, reason: 'cancelled by alice' });
    expect(await executorA.handler.handle(c, {}, 1)).toBe('cancelled');
    expect(runs.get(c.idempotencyKey)).toBeUndefined();
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'cancelled',
      attempts: 0,
      result: { status: 'cancelled' },
    });
    expect(outcomesSent(c).map((p) => p.payload.outcome.status)).toEqual(['cancelled']);
    // Delivered again (a re-sent command): the same answer, still not run.
    expect(await executorB.handler.handle(c, {}, 2)).toBe('dedup');
    expect(runs.get(c.idempotencyKey)).toBeUndefined();
  });

  it('never starts a pure call of a run this process heard stopped', async () => {
    const c = call('test.read');
    executorA.stops.stop(c.tenantId, c.runId, 'interrupted');
    expect(await executorA.handler.handle(c, {}, 1)).toBe('cancelled');
    expect(runs.get(c.idempotencyKey)).toBeUndefined();
  });

  it('lets a call with an effect that is acting finish when its run stops, and records its real outcome', async () => {
    const c = call('test.slow-charge');
    const acting = executorA.handler.handle(c, {}, 1);
    await waitFor(() => slowStarts.get(c.idempotencyKey) === 1);
    // Interrupting an effect midway would make its outcome unknowable: it is not aborted.
    expect(executorA.stops.stop(c.tenantId, c.runId, 'cancelled by alice')).toBe(0);
    expect(await acting).toBe('executed');
    expect(slowAborts.get(c.idempotencyKey)).toBeUndefined();
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({ state: 'succeeded' });
    expect(outcomesSent(c).map((p) => p.payload.outcome.status)).toEqual(['completed']);
  });

  it('aborts a pure call acting when its run stops (it has no effect to lose)', async () => {
    const c = call('test.slow-read');
    const acting = executorA.handler.handle(c, {}, 1);
    await waitFor(() => slowStarts.get(c.idempotencyKey) === 1);
    expect(executorA.stops.stop(c.tenantId, c.runId, 'cancelled by alice')).toBe(1);
    expect(await acting).toBe('executed');
    expect(slowAborts.get(c.idempotencyKey)).toBe(1);
    expect(outcomesSent(c).map((p) => p.payload.outcome)).toEqual([
      { status: 'failed', error: expect.objectContaining({ code: 'run.stopped' }) },
    ]);
  });
});

describe('ToolCallHandler: a call another executor is acting on', () => {
  it('is left alone by a second delivery (no retry, no escalation), and finishes once', async () => {
    const c = call('test.slow-charge');
    const first = executorA.handler.handle(c, {}, 1);
    await waitFor(() => slowStarts.get(c.idempotencyKey) === 1);
    // The watchdog re-sent the command: another executor gets it while the first still acts.
    expect(await executorB.handler.handle(c, {}, 1)).toBe('in-progress');
    // A redelivery may be a dead holder's own message: it comes back once the lease has run out.
    await expect(executorB.handler.handle(c, {}, 2)).rejects.toMatchObject({
      code: 'tool.in_progress',
      retryAfterMs: expect.any(Number),
    });
    await first;
    expect(slowStarts.get(c.idempotencyKey)).toBe(1);
    expect(outcomesSent(c)).toHaveLength(1);
  });

  it('is retried by a later delivery once its holder is gone (its lease ran out)', async () => {
    const c = call('test.upsert');
    const ledger = new EffectLedgerRepository(db.sql);
    // An executor claimed it and died: its lease ends in the past.
    await ledger.recordStarted(
      { ...c, key: c.idempotencyKey, kind: 'idempotent', command: c },
      {
        holder: 'executor-dead',
        leaseMs: -1,
      },
    );
    expect(await executorB.handler.handle(c, {}, 2)).toBe('retried');
    expect(await ledger.get(c.idempotencyKey)).toMatchObject({ state: 'succeeded', attempts: 2 });
  });
});

describe('ToolCallHandler: an attempt whose key a newer attempt took over', () => {
  it('does not end its message: the newer attempt failed transiently on a delivery of it, and the call still gets its result', async () => {
    const c = call('test.gated-upsert');
    const ledger = new EffectLedgerRepository(db.sql);
    // Attempt 1 (executor A, delivery 1) acts and is held.
    const first = executorA.handler.handle(c, {}, 1);
    await waitFor(() => gatedUpserts.get(c.idempotencyKey) === 1);
    // Its lease runs out meanwhile (its renewals could not reach Postgres), and the bus gives the same
    // message to executor B: attempt 2 fails transiently, so that delivery asks for the message again.
    await db.sql.run(`update ${db.sql.table('effects')} set lease_until = now() - interval '1 second' where key = ?`, [
      c.idempotencyKey,
    ]);
    await expect(executorB.handler.handle(c, {}, 2)).rejects.toMatchObject({ code: 'store.unavailable' });
    expect(await ledger.get(c.idempotencyKey)).toMatchObject({ state: 'started', attempts: 2 });
    // Attempt 1 ends: its outcome is dropped (the row is attempt 2's). Its delivery must not end the
    // message (that would end it for attempt 2 too, and nothing would ever answer the thread): it asks
    // for it again.
    letGatedUpsertFinish();
    await expect(first).rejects.toMatchObject({ code: 'effect.superseded', retryAfterMs: expect.any(Number) });
    expect(outcomesSent(c)).toHaveLength(0);
    // The message comes back once attempt 2's lease ran out: attempt 3 records the one outcome.
    await db.sql.run(`update ${db.sql.table('effects')} set lease_until = now() - interval '1 second' where key = ?`, [
      c.idempotencyKey,
    ]);
    expect(await executorA.handler.handle(c, {}, 3)).toBe('retried');
    expect(await ledger.get(c.idempotencyKey)).toMatchObject({ state: 'succeeded', attempts: 3 });
    expect(outcomesSent(c)).toHaveLength(1);
  });

  it('never starts a second attempt beside one acting in the same process (the message came back early)', async () => {
    const c = call('test.slow-charge');
    const first = executorA.handler.handle(c, {}, 1);
    await waitFor(() => slowStarts.get(c.idempotencyKey) === 1);
    // The bus's ack wait ran out while the heartbeats were held up: the same executor gets the message
    // again. Its lease is its own, so only the process knows the call is acting.
    await expect(executorA.handler.handle(c, {}, 2)).rejects.toMatchObject({ code: 'tool.in_progress' });
    expect(await executorA.handler.handle(c, {}, 1)).toBe('in-progress');
    expect(await first).toBe('executed');
    expect(slowStarts.get(c.idempotencyKey)).toBe(1);
    expect(outcomesSent(c)).toHaveLength(1);
    expect(await new EffectLedgerRepository(db.sql).get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
    });
  });
});

describe('ToolCallHandler: an attempt that comes back after a human answered', () => {
  it("writes nothing over the human's answer, and only re-sends that answer", async () => {
    const c = call('test.gated-charge');
    const ledger = new EffectLedgerRepository(db.sql);
    const late = executorA.handler.handle(c, {}, 1);
    await waitFor(() => gatedStarts.get(c.idempotencyKey) === 1);
    // Executor A stalls: its lease runs out while the tool still acts.
    await db.sql.run(`update ${db.sql.table('effects')} set lease_until = now() - interval '1 second' where key = ?`, [
      c.idempotencyKey,
    ]);
    // Its message comes back to executor B, which cannot tell whether the charge happened: a human must.
    expect(await executorB.handler.handle(c, {}, 2)).toBe('escalated');
    expect(
      await executorB.handler.resolve(
        {
          kind: 'tool.resolve',
          commandId: `${c.commandId}:resolve`,
          tenantId: c.tenantId,
          idempotencyKey: c.idempotencyKey,
          resolution: { decision: 'happened', result: { charged: 'per the bank statement' } },
          by: 'ops@acme',
        },
        {},
      ),
    ).toBe('resolved');
    // Executor A's attempt finishes now: its outcome is dropped.
    letGatedFinish();
    expect(await late).toBe('dedup');
    expect(await ledger.get(c.idempotencyKey)).toMatchObject({
      state: 'succeeded',
      resolution: 'happened',
      resolvedBy: 'ops@acme',
      result: { status: 'completed', result: { charged: 'per the bank statement' } },
    });
    const outcomes = outcomesSent(c).map((m) => m.payload.outcome);
    expect(outcomes.map((o) => o.status)).toEqual(['uncertain', 'completed', 'completed']);
    expect(JSON.stringify(outcomes)).not.toContain('by the late attempt');
    expect(gatedStarts.get(c.idempotencyKey)).toBe(1);
  });
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ToolCallHandler: a tool that no source offers any more', () => {
  it('escalates a started idempotent or at-most-once call instead of failing it (an earlier attempt may have acted)', async () => {
    for (const kind of ['idempotent', 'at-most-once'] as const) {
      // An earlier executor claimed the key for a remote tool, then died; its service is gone now.
      const c = call('svc.gone');
      const ledger = new EffectLedgerRepository(db.sql);
      await ledger.recordStarted({ ...c, key: c.idempotencyKey, kind, command: c, traceparent: undefined });
      expect(await handler.handle(c, {}, 2)).toBe('escalated');
      expect(await ledger.get(c.idempotencyKey)).toMatchObject({ state: 'uncertain', kind });
      expect(outcomesSent(c).map((m) => m.payload.outcome)).toEqual([
        expect.objectContaining({ status: 'uncertain', reason: expect.stringContaining('no source offers svc.gone') }),
      ]);
    }
  });

  it('fails a first call of a tool nobody offers, which never acted', async () => {
    const c = call('svc.unknown');
    expect(await handler.handle(c, {}, 1)).toBe('executed');
    expect(outcomesSent(c).map((m) => m.payload.outcome)).toEqual([
      {
        status: 'failed',
        error: { code: 'unknown_tool', message: 'no tool named svc.unknown is registered', retryable: false },
      },
    ]);
  });
});
