import { performance } from 'node:perf_hooks';
import { openServiceDatabase, PgThreadStore } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import { decide, foldEvents, initialThreadState, type ThreadCommand, type ThreadState } from '@ratchet/domain';
// Not the package index (it also exports the jest contract suites, which refuse to load outside jest).
// eslint-disable-next-line import/no-relative-packages -- see above
import { createTestDatabase } from '../../libs/testing/src/test-database';
import { summarize } from './stats';
import { ContentSeal } from '@ratchet/adapters';
import type { ContentKeys, DataKey } from '@ratchet/domain';
import { randomBytes } from 'node:crypto';
// eslint-disable-next-line import/no-relative-packages -- see above
import { demoRunEvents } from '../../libs/testing/src/demo-run.events';

const AT = '2026-11-30T00:00:00.000Z';

/** Per-decision latency of the pure decider: one RequestRun then model/tool results, 10 steps. */
export function benchDecide(iterations = 2000) {
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    let state: ThreadState = initialThreadState();
    const runId = `r${i}`;
    const base = { tenantId: 't', threadId: `th${i}`, at: AT, runId };
    const commands: ThreadCommand[] = [
      {
        ...base,
        type: 'RequestRun',
        requestId: `q${i}`,
        agent: 'a',
        agentVersion: 1,
        maxSteps: 20,
        input: [{ role: 'user', content: 'go' }],
        principal: { id: 'p', roles: [] },
        concurrency: 'reject',
        metadata: {},
      },
    ];
    let version = 0;
    for (const c of commands) {
      const t0 = performance.now();
      const d = decide(state, c);
      samples.push(performance.now() - t0);
      const events = d.events.map(
        (e, k) =>
          ({
            id: `e${version + k}`,
            v: 1,
            tenantId: 't',
            threadId: base.threadId,
            version: version + k + 1,
            at: AT,
            causationId: 'c',
            correlationId: 'c',
            ...e,
          }) as ThreadEvent,
      );
      version += events.length;
      state = foldEvents(state, events);
      const run = state.active;
      if (!run) break;
      if (run.phase === 'model' && run.modelCall && run.step <= 10) {
        commands.push({
          ...base,
          type: 'RecordModelResult',
          commandId: run.modelCall.commandId,
          step: run.step,
          outcome: {
            status: 'ok',
            content: null,
            toolCalls: [{ id: `c${run.step}`, name: 'noop', args: {} }],
            usage: { inputTokens: 1, outputTokens: 1 },
            model: 'm',
          },
        });
      } else if (run.phase === 'tools') {
        const call = run.calls.find((x) => x.status === 'requested');
        if (call)
          commands.push({
            ...base,
            type: 'RecordToolResult',
            callId: call.callId,
            step: run.step,
            outcome: { status: 'completed', result: { ok: true } },
          });
      }
    }
  }
  return summarize(samples);
}

/**
 * Durable appends through the Postgres event log: one transaction per append, like a handler. On a fresh
 * copy of the migrated template database (`DATABASE_URL` names the server), dropped afterwards: the bench
 * needs no database migrated beforehand, and leaves none behind.
 */
export async function benchAppends(total = 2000, concurrency = 16) {
  const testDb = await createTestDatabase();
  try {
    return await appendsOn(testDb.url, total, concurrency);
  } finally {
    await testDb.drop();
  }
}

async function appendsOn(databaseUrl: string, total: number, concurrency: number) {
  const db = await openServiceDatabase(databaseUrl, 'orchestrator', concurrency + 2);
  const store = new PgThreadStore<unknown>(db, () => ({ status: 'bench', agent: null, activeRunId: null }));
  const prefix = `bench-${Date.now()}`;
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      const threadId = `${prefix}-${w}`;
      let version = 0;
      while (next < total) {
        next++;
        const t0 = performance.now();
        await store.transaction(async (tx) => {
          const event = {
            id: `${threadId}-${version + 1}`,
            v: 1,
            type: 'thread.created',
            tenantId: 'bench',
            threadId,
            version: version + 1,
            at: new Date().toISOString(),
            causationId: 'bench',
            correlationId: 'bench',
            data: { createdBy: 'bench' },
          } as ThreadEvent;
          await tx.appendEvents('bench', threadId, version, [event]);
          await tx.saveProjection({ tenantId: 'bench', threadId, version: version + 1, state: { n: version + 1 } }, []);
        });
        version++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await db.close();
  return { appendsPerSecond: total / seconds, latency: summarize(latencies), concurrency };
}

/**
 * What sealing content at rest costs a process (ADR 0034): the demo run's log (12 events, five with
 * content) sealed as the store writes it and opened as it reads it, keys already cached. CPU time of
 * this process per event of the log, in microseconds.
 */
export async function benchSeal(iterations = 2000): Promise<{ sealUs: number; openUs: number }> {
  const key: DataKey = { kid: 'k_bench', key: randomBytes(32) };
  const keys: ContentKeys = {
    configured: true,
    forThread: async () => key,
    byIds: async (kids) => new Map(kids.map((k) => [k, key])),
  };
  const seal = new ContentSeal(keys);
  const events = demoRunEvents();
  let sealed = await seal.sealEvents('t', 'th', events);
  const t0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) sealed = await seal.sealEvents('t', 'th', events);
  const t1 = process.cpuUsage(t0);
  for (let i = 0; i < iterations; i++) await seal.openEvents(sealed, 'throw');
  const t2 = process.cpuUsage(t0);
  const per = (us: number) => us / (iterations * events.length);
  const sealUs = per(t1.user + t1.system);
  return { sealUs, openUs: per(t2.user + t2.system) - sealUs };
}
