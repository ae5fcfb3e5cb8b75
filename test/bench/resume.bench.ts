import { performance } from 'node:perf_hooks';
import { connect } from 'nats';
import {
  declareTopology,
  deleteTopology,
  ensureTopology,
  JetStreamPublisher,
  openServiceDatabase,
  PgOutboxStore,
  PgThreadStore,
} from '@ratchet/adapters';
import { subjects, type ThreadEvent } from '@ratchet/contracts';
import {
  decide,
  foldEvents,
  foldRecord,
  initialThreadState,
  recordFrom,
  runRowsOf,
  threadColumns,
  type ThreadCommand,
  type ThreadState,
} from '@ratchet/domain';
import { OutboxRelay } from '@ratchet/platform';
// The package index also exports the jest contract suites, which refuse to load outside jest.
// eslint-disable-next-line import/no-relative-packages
import { createTestDatabase, uniquePrefix } from '../../libs/testing/src/test-database';
import { ThreadCommandHandler } from '@ratchet/engine';
// The engine as the orchestrator composes it, in-process (an app exports nothing; the bench measures it directly).
// eslint-disable-next-line import/no-relative-packages
import { orchestratorEngineDeps } from '../../apps/orchestrator/src/threads/engine-deps';
import { DEFAULT_DATABASE_URL } from './harness';
import { summarize, type Summary } from './stats';

/*
 * Resume cost: a worker takes over a thread with N prior events and makes its next decision. The
 * thread is built by appending a realistic history directly (bench-agent runs: 10 tool steps and an
 * answer each, driven through the pure decider), then one `handle()` of the real ThreadCommandHandler
 * over the real PgThreadStore is timed: claim, load, fold, decide, append, project, enqueue, commit,
 * relay flush. "normal" = the projection is there (at version N); "no projection" = it was dropped,
 * so the whole log is replayed.
 */

const TENANT = 'resume';
const AT = '2026-11-30T00:00:00.000Z';

export interface ResumeFigure {
  events: number;
  withProjection: Summary;
  withoutProjection: Summary;
  /** Size of the stored projection state, bytes of JSON. */
  projectionBytes: number;
  /** Size of the thread's conversation (its `thread_messages` rows), bytes of JSON. */
  transcriptBytes: number;
}

/** Bench-agent runs on one thread until it has at least `n` events; the first `n` are returned. */
export function buildHistory(threadId: string, n: number): ThreadEvent[] {
  const events: ThreadEvent[] = [];
  let state: ThreadState = initialThreadState();
  const apply = (command: ThreadCommand) => {
    const d = decide(state, command);
    const batch = d.events.map(
      (e, k) =>
        ({
          id: `ev_${threadId}_${events.length + k + 1}`,
          v: 1,
          tenantId: TENANT,
          threadId,
          version: events.length + k + 1,
          at: AT,
          causationId: 'bench',
          correlationId: command.type === 'RequestRun' ? command.requestId : 'bench',
          ...e,
        }) as ThreadEvent,
    );
    events.push(...batch);
    state = foldEvents(state, batch);
  };
  for (let r = 0; events.length < n; r++) {
    const runId = `run_${threadId}_${r}`;
    apply({
      type: 'RequestRun',
      tenantId: TENANT,
      threadId,
      at: AT,
      runId,
      requestId: `req-${r}`,
      agent: 'bench',
      agentVersion: 1,
      maxSteps: 11,
      input: [{ role: 'user', content: 'go' }],
      principal: { id: 'bench', roles: ['runner'] },
      concurrency: 'enqueue',
      metadata: {},
    });
    for (let guard = 0; guard < 100 && state.active?.runId === runId; guard++) {
      const run = state.active;
      const base = { tenantId: TENANT, threadId, at: AT, runId };
      if (run.phase === 'model' && run.modelCall) {
        apply({
          ...base,
          type: 'RecordModelResult',
          commandId: run.modelCall.commandId,
          step: run.step,
          outcome: {
            status: 'ok',
            content: run.step <= 10 ? null : `done after ${run.step} steps`,
            toolCalls: run.step <= 10 ? [{ id: `call_${run.step}`, name: 'bench.noop', args: {} }] : [],
            usage: { inputTokens: 1, outputTokens: 1 },
            model: 'scripted',
          },
        });
      } else {
        const call = run.calls.find((c) => c.status === 'requested');
        if (!call) break;
        apply({
          ...base,
          type: 'RecordToolResult',
          callId: call.callId,
          step: run.step,
          outcome: { status: 'completed', result: { ok: true } },
        });
      }
    }
  }
  return events.slice(0, n);
}

export async function benchResume(sizes: number[], reps: number, log: (line: string) => void): Promise<ResumeFigure[]> {
  process.env['DATABASE_URL'] ??= DEFAULT_DATABASE_URL;
  const testDb = await createTestDatabase();
  const prefix = uniquePrefix();
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  const topology = declareTopology({ subjectPrefix: prefix.subject, streamPrefix: prefix.stream });
  const jsm = await nc.jetstreamManager();
  await ensureTopology(jsm, topology, []);
  const db = await openServiceDatabase(testDb.url, 'orchestrator', 4);
  const store = new PgThreadStore<ThreadState>(db, threadColumns);
  const relay = new OutboxRelay(new PgOutboxStore(db), new JetStreamPublisher(nc), {
    onError: () => undefined,
  });
  const handler = new ThreadCommandHandler(
    orchestratorEngineDeps({ store, relay, subjects: subjects(prefix.subject) }),
  );
  const t = db.sql.table.bind(db.sql);
  const figures: ResumeFigure[] = [];
  try {
    let seq = 0;
    const measure = async (threadId: string, n: number, projection: boolean, state: ThreadState) => {
      // Back to exactly N events (and their messages), with or without the projection row.
      await db.sql.run(`delete from ${t('thread_events')} where tenant_id = ? and thread_id = ? and version > ?`, [
        TENANT,
        threadId,
        n,
      ]);
      await db.sql.run(`delete from ${t('thread_messages')} where tenant_id = ? and thread_id = ? and seq > ?`, [
        TENANT,
        threadId,
        state.messages,
      ]);
      await db.sql.run(`delete from ${t('threads')} where tenant_id = ? and thread_id = ?`, [TENANT, threadId]);
      await db.sql.run(`delete from ${t('runs')} where tenant_id = ? and run_id like 'run_resume_%'`, [TENANT]);
      if (projection) {
        await store.transaction((tx) => tx.saveProjection({ tenantId: TENANT, threadId, version: n, state }, []));
      }
      const requestId = `resume-${seq++}`;
      const command: ThreadCommand = {
        type: 'RequestRun',
        tenantId: TENANT,
        threadId,
        at: new Date().toISOString(),
        runId: `run_resume_${requestId}`,
        requestId,
        agent: 'bench',
        agentVersion: 1,
        maxSteps: 11,
        input: [{ role: 'user', content: 'go' }],
        principal: { id: 'bench', roles: ['runner'] },
        concurrency: 'enqueue',
        metadata: {},
      };
      const t0 = performance.now();
      const outcome = await handler.handle('orchestrator-requests', `${TENANT}:${requestId}`, command, {
        correlationId: requestId,
      });
      const ms = performance.now() - t0;
      if (outcome.status !== 'applied') throw new Error(`resume bench: handle() was ${outcome.status}`);
      return ms;
    };
    for (const n of sizes) {
      const threadId = `resume-${n}`;
      const history = buildHistory(threadId, n);
      const record = foldRecord(recordFrom(), history);
      const state = record.state;
      for (let i = 0; i < history.length; i += 1000) {
        const chunk = history.slice(i, i + 1000);
        await store.transaction((tx) => tx.appendEvents(TENANT, threadId, i, chunk));
      }
      await store.transaction((tx) =>
        tx.saveProjection({ tenantId: TENANT, threadId, version: n, state }, runRowsOf(TENANT, threadId, record), {
          from: 1,
          messages: record.transcript,
        }),
      );
      await db.sql.run('analyze');
      // Warm-up (JIT, plan cache, buffers) before timing.
      for (let i = 0; i < 3; i++) await measure(threadId, n, i % 2 === 0, state);
      const withP: number[] = [];
      const withoutP: number[] = [];
      for (let i = 0; i < reps; i++) {
        withP.push(await measure(threadId, n, true, state));
        withoutP.push(await measure(threadId, n, false, state));
      }
      const fig = {
        events: n,
        withProjection: summarize(withP),
        withoutProjection: summarize(withoutP),
        projectionBytes: JSON.stringify(state).length,
        transcriptBytes: JSON.stringify(record.transcript).length,
      };
      figures.push(fig);
      log(
        `resume: ${n} prior events: ${fig.withProjection.median.toFixed(2)} ms with projection, ` +
          `${fig.withoutProjection.median.toFixed(2)} ms without (state ${fig.projectionBytes} B, ` +
          `conversation ${fig.transcriptBytes} B)`,
      );
    }
    return figures;
  } finally {
    await relay.stop();
    await deleteTopology(jsm, topology).catch(() => undefined);
    await nc.close();
    await db.close();
    await testDb.drop();
  }
}
