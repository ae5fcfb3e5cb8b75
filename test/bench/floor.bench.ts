import { performance } from 'node:perf_hooks';
// Not the package index (it also exports the jest contract suites, which refuse to load outside jest).
// eslint-disable-next-line import/no-relative-packages -- see above
import { createTestDatabase } from '../../libs/testing/src/test-database';
import { STEPS } from './agent-loop.bench';
import { summarize, type Summary } from './stats';

/*
 * Workload "floor": the agent-loop written by hand on the same Postgres server, with nothing else — per
 * step two single-row INSERT commits (the model's result, the tool's result) on one connection per run,
 * STEPS steps a run, each run its own thread. What a durable loop cannot go below on this machine at
 * this moment: the agent-loop figures are printed as ratios to it, measured in the same invocation.
 */

/**
 * The resume floor: one thread taken over and stepped, by hand — its row read (a state of about the
 * size a bench thread's projection has, ~700 B), then one event appended and the row updated in one autocommit
 * statement. Two round trips and one commit: what loading a thread and making one durable decision cannot
 * go below. Resume figures are printed as ratios to it, measured right before them.
 */
export async function benchLoadAndStepFloor(repetitions: number): Promise<Summary> {
  process.env['DATABASE_URL'] ??= 'postgres://postgres@127.0.0.1:5432/ratchet';
  const db = await createTestDatabase();
  const pool = floorPool(db.url, 1);
  try {
    await pool.query(
      'create table floor_threads (thread_id text primary key, version int not null, state jsonb not null);' +
        'create table floor_events (thread_id text not null, version int not null, data jsonb not null, primary key (thread_id, version))',
    );
    const client = await pool.connect();
    const ms: number[] = [];
    try {
      const state = {
        messages: Array.from({ length: 3 }, (_, i) => ({
          role: i % 2 ? 'assistant' : 'user',
          content: 'x'.repeat(200),
        })),
      };
      for (let i = 0; i < repetitions + 3; i++) {
        const thread = `floor-resume-${process.pid}-${counter++}`;
        await client.query('insert into floor_threads values ($1, 1, $2)', [thread, state]);
        const t0 = performance.now();
        const loaded = (await client.query('select version, state from floor_threads where thread_id = $1', [
          thread,
        ])) as { rows: Array<{ version: number }> };
        const version = (loaded.rows[0]?.version ?? 0) + 1;
        await client.query(
          `with e as (insert into floor_events (thread_id, version, data) values ($1, $2, $3))
           update floor_threads set version = $2, state = state || $4 where thread_id = $1`,
          [thread, version, { type: 'run.requested' }, { last: version }],
        );
        if (i >= 3) ms.push(performance.now() - t0); // the first three warm up
      }
    } finally {
      client.release();
    }
    return summarize(ms);
  } finally {
    await pool.end();
    await db.drop();
  }
}

export interface FloorResult {
  perStepMs: Summary;
  throughput: Array<{ concurrency: number; stepsPerSecond: number }>;
}

/** What this bench uses of `pg` (the driver the adapters run on; it ships no types). */
interface PoolClient {
  query(text: string, values?: unknown[]): Promise<unknown>;
  release(): void;
}
interface Pool {
  query(text: string): Promise<unknown>;
  connect(): Promise<PoolClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an untyped CommonJS driver
const { Pool } = require('pg') as { Pool: new (options: { connectionString: string; max: number }) => Pool };

let counter = 0;

async function oneRun(client: PoolClient): Promise<number> {
  const thread = `floor-${process.pid}-${counter++}`;
  const t0 = performance.now();
  for (let step = 1; step <= STEPS; step++) {
    // Autocommit: each INSERT is its own transaction, fsynced on commit like the harness's.
    await client.query('insert into floor_events (thread_id, version, data) values ($1, $2, $3)', [
      thread,
      step * 2 - 1,
      { type: 'model.responded', step },
    ]);
    await client.query('insert into floor_events (thread_id, version, data) values ($1, $2, $3)', [
      thread,
      step * 2,
      { type: 'tool.completed', step },
    ]);
  }
  return (performance.now() - t0) / STEPS;
}

export async function benchFloor(
  options: { sequentialRuns: number; concurrency: number[]; runsPerWorker: number; minRuns: number },
  log: (line: string) => void,
): Promise<FloorResult> {
  process.env['DATABASE_URL'] ??= 'postgres://postgres@127.0.0.1:5432/ratchet';
  const db = await createTestDatabase();
  const pool = floorPool(db.url, Math.max(...options.concurrency, 1));
  try {
    await pool.query(
      'create table floor_events (thread_id text not null, version int not null, data jsonb not null, primary key (thread_id, version))',
    );
    const perStep: number[] = [];
    const first = await pool.connect();
    try {
      for (let i = 0; i < 5; i++) await oneRun(first);
      for (let i = 0; i < options.sequentialRuns; i++) perStep.push(await oneRun(first));
    } finally {
      first.release();
    }
    log(`floor: sequential ${options.sequentialRuns} runs, median ${summarize(perStep).median.toFixed(2)} ms/step`);
    const throughput: FloorResult['throughput'] = [];
    for (const c of options.concurrency) {
      const runs = Math.max(options.minRuns, c * options.runsPerWorker);
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: c }, async () => {
          const client = await pool.connect();
          try {
            while (next < runs) {
              next++;
              await oneRun(client);
            }
          } finally {
            client.release();
          }
        }),
      );
      const stepsPerSecond = (runs * STEPS) / ((performance.now() - t0) / 1000);
      throughput.push({ concurrency: c, stepsPerSecond });
      log(`floor: ${c} concurrent, ${runs} runs: ${stepsPerSecond.toFixed(0)} steps/s`);
    }
    return { perStepMs: summarize(perStep), throughput };
  } finally {
    await pool.end();
    await db.drop();
  }
}

/**
 * The floor's own pool. An idle connection the server ends (another process dropping a database with
 * `force`, a restart) is reported, not left to crash the bench: the next query on it fails visibly.
 */
function floorPool(url: string, max: number): Pool {
  const pool = new Pool({ connectionString: url, max });
  pool.on('error', (error) => process.stderr.write(`floor: an idle connection ended: ${error.message}\n`));
  return pool;
}
