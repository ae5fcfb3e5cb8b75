import type { RunDebounce, RunSlot, RunThrottle } from '@ratchet/contracts';
import type { SqlExecutor } from './sql';

/**
 * The count of a tenant's runs in flight, up to a bound, as a scalar subquery: `tenant` and `upTo` are SQL
 * expressions (placeholders or outer columns). Runs waiting for a human are not in flight (they use no
 * worker). Its predicate is the partial index's (`runs_in_flight_idx ... where status in ('queued',
 * 'running') and waiting_on is null`), so the count reads only that index.
 */
export function runsInFlightCount(sql: SqlExecutor, tenant: string, upTo: string): string {
  return `(select count(*)::int from (
     select 1 from ${sql.table('runs')} r
      where r.tenant_id = ${tenant} and r.status in ('queued', 'running') and r.waiting_on is null
     limit ${upTo}
   ) a)`;
}

/**
 * The count of a tenant's runs in flight holding a concurrency key (`customer=42`), up to its max, as a
 * scalar subquery over SQL expressions. Through the GIN index of the in-flight runs' keys
 * (`runs_slot_keys_idx`, the same predicate as the runs in flight).
 */
export function slotRunsCount(sql: SqlExecutor, tenant: string, key: string, upTo: string): string {
  return `(select count(*)::int from (
     select 1 from ${sql.table('runs')} r
      where r.tenant_id = ${tenant} and r.slot_keys @> array[${key}]::text[]
        and r.status in ('queued', 'running') and r.waiting_on is null
     limit ${upTo}
   ) a)`;
}

/**
 * The count of a tenant's runs with a throttle key that started after `since` (all of them after: a start
 * committed by an orchestrator whose clock is ahead counts too), up to the throttle's limit, as a scalar
 * subquery over SQL expressions. Through `runs_throttle_idx`; ended runs count (their start was in the window).
 */
export function throttleStartsCount(
  sql: SqlExecutor,
  tenant: string,
  key: string,
  since: string,
  upTo: string,
): string {
  return `(select count(*)::int from (
     select 1 from ${sql.table('runs')} r
      where r.tenant_id = ${tenant} and r.throttle_key = ${key} and r.started_at > ${since}
        and r.throttle_key is not null and r.started_at is not null
     limit ${upTo}
   ) a)`;
}

/**
 * The run of a tenant's latest queued request of a debounce key (by request time, then run id), as a scalar
 * subquery over SQL expressions: the one request of the key that may start. Through `runs_debounce_idx`.
 */
export function debounceLatest(sql: SqlExecutor, tenant: string, key: string): string {
  return `(select dl.run_id from ${sql.table('runs')} dl
      where dl.tenant_id = ${tenant} and dl.debounce_key = ${key} and dl.status = 'queued'
      order by dl.waiting_since desc nulls last, dl.run_id desc limit 1)`;
}

/** The count of a tenant's runs waiting for a human, up to a bound (the partial index `runs_waiting_idx`). */
export function runsWaitingCount(sql: SqlExecutor, tenant: string, upTo: string): string {
  return `(select count(*)::int from (
     select 1 from ${sql.table('runs')} r
      where r.tenant_id = ${tenant} and r.status = 'running' and r.waiting_on is not null
     limit ${upTo}
   ) a)`;
}

/**
 * What a run request meets at admission: the tenant's runs in flight and waiting (each up to its bound)
 * and whether it has a run.
 */
export interface RunAdmissionFacts {
  activeRuns: number;
  waitingRuns: number;
  known: boolean;
}

/**
 * The tenant's runs in flight (queued, or running and not waiting) counted up to `upTo.active`, its runs
 * waiting for a human up to `upTo.waiting`, and whether `requestId` already started a run. Each count goes
 * through its partial index, so it reads at most its bound's index entries however many of the tenant's
 * runs have ended. The claim of a run request counts the same rows (pg-thread-store), which is where the
 * bounds are decided.
 */
export async function runAdmissionFacts(
  sql: SqlExecutor,
  tenantId: string,
  requestId: string,
  upTo: { active: number; waiting: number },
): Promise<RunAdmissionFacts> {
  const rows = await sql.query<{ n: number; w: number; known: boolean }>(
    `select ${runsInFlightCount(sql, '?', '?')} as n, ${runsWaitingCount(sql, '?', '?')} as w,
            exists (select 1 from ${sql.table('runs')} where tenant_id = ? and request_id = ?) as known`,
    [tenantId, Math.max(0, upTo.active), tenantId, Math.max(0, upTo.waiting), tenantId, requestId],
  );
  return { activeRuns: rows[0]?.n ?? 0, waitingRuns: rows[0]?.w ?? 0, known: rows[0]?.known === true };
}

/** A run held for admission that there is room for now: the first held run of its thread, with its keys. */
export interface AdmissionCandidate {
  tenantId: string;
  threadId: string;
  runId: string;
  slots: RunSlot[];
  /** Its throttle, when it has one: there was room under it at `at`. */
  throttle?: RunThrottle;
  /** Its debounce, when it has one: its period was over at `at` and no later request of its key came. */
  debounce?: RunDebounce;
}

/**
 * The runs held for admission (`waiting_on = 'admission'`, ADR 0045) to try to start now: the first held run
 * of each thread, when each of its concurrency keys has room and as many per key as it has room for; per
 * tenant as many as it has room for under `limit` (0: no bound); served **round-robin across keys** — the
 * n-th held run of a key with m runs in flight comes at place m + n, so the key with the fewest runs going
 * is served next and one busy key does not hold the queue for the others; within a key (and among runs
 * without keys) by priority, a run served as if requested `priority` seconds earlier; a throttled run when
 * fewer than its limit started in the period before `at` (as many per throttle as it has room for); only
 * a debounced run once its period is over if no later request of its key came; only runs whose thread has
 * no run going; at most `batch`. Advice only: the admission itself counts again under the locks. Reads the partial index
 * `runs_held_idx`, the thread's state for the held run's keys, and the counts through their indexes.
 */
export async function admissionCandidates(
  sql: SqlExecutor,
  limit: number,
  batch: number,
  at: string,
): Promise<AdmissionCandidate[]> {
  const rows = await sql.query<{
    tenant_id: string;
    thread_id: string;
    run_id: string;
    slots: RunSlot[];
    throttle: RunThrottle | null;
    debounce: RunDebounce | null;
  }>(
    `with heads as (
       select distinct on (r.tenant_id, r.thread_id) r.tenant_id, r.thread_id, r.run_id, r.waiting_since, r.version,
              r.waiting_since - r.priority * interval '1 second' as served_from
         from ${sql.table('runs')} r
        where r.status = 'queued' and r.waiting_on = 'admission'
        order by r.tenant_id, r.thread_id, r.waiting_since, r.version
     ), keyed as (
       select h.*, coalesce(t.state->'queue'->0->'slots', '[]'::jsonb) as slots,
              nullif(t.state->'queue'->0->'throttle', 'null'::jsonb) as throttle,
              nullif(t.state->'queue'->0->'debounce', 'null'::jsonb) as debounce
         from heads h join ${sql.table('threads')} t on t.tenant_id = h.tenant_id and t.thread_id = h.thread_id
        where t.state->'queue'->0->>'runId' = h.run_id and coalesce(t.state->'active', 'null'::jsonb) = 'null'::jsonb
     ), roomy as (
       select k.*, (select min(s.max - ${slotRunsCount(sql, 'k.tenant_id', 's.key', 's.max')})
                      from jsonb_to_recordset(k.slots) as s(key text, max int)) as key_room,
              case when k.throttle is not null then (k.throttle->>'limit')::int - ${throttleStartsCount(
                sql,
                'k.tenant_id',
                "k.throttle->>'key'",
                "?::timestamptz - (k.throttle->>'periodSeconds')::int * interval '1 second'",
                "(k.throttle->>'limit')::int",
              )} end as throttle_room,
              -- A debounced run goes once its period is over, if no later request of its key came.
              k.debounce is null or (k.waiting_since + (k.debounce->>'periodSeconds')::int * interval '1 second' <= ?::timestamptz
                and ${debounceLatest(sql, 'k.tenant_id', "k.debounce->>'key'")} = k.run_id) as debounce_ready,
              coalesce((select ${slotRunsCount(sql, 'k.tenant_id', 's.key', 's.max')}
                          from jsonb_to_recordset(jsonb_path_query_array(k.slots, '$[0]')) as s(key text, max int)), 0)
                as key_in_flight
         from keyed k
     ), turns as (
       -- A key's runs take turns with the other keys': the n-th held run of a key that has m runs in flight
       -- comes at place m + n, so the key with the fewest runs going is served next; at the same place, the
       -- key the pass served longest ago (slot_turns), then the run that waited longest — by its priority:
       -- as if requested priority seconds earlier (served_from).
       select r.*, r.key_in_flight + row_number() over (partition by r.tenant_id, r.slots->0->>'key'
                                                        order by r.served_from, r.version) as turn,
              (select st.served_at from ${sql.table('slot_turns')} st
                where st.tenant_id = r.tenant_id and st.slot_key = r.slots->0->>'key') as served_at,
              row_number() over (partition by r.tenant_id, r.slots->0->>'key' order by r.served_from, r.version) as nth,
              row_number() over (partition by r.tenant_id, r.throttle->>'key' order by r.served_from, r.version) as tnth
         from roomy r where (r.key_room is null or r.key_room > 0) and (r.throttle_room is null or r.throttle_room > 0)
                            and r.debounce_ready
     ), ranked as (
       select t.*, row_number() over (partition by t.tenant_id
                                      order by t.turn, t.served_at nulls first, t.served_from, t.version) as n
         from turns t where (t.key_room is null or t.nth <= t.key_room)
                        and (t.throttle_room is null or t.tnth <= t.throttle_room)
     ), room as (
       select t.tenant_id,
              case when ?::int > 0 then ?::int - ${runsInFlightCount(sql, 't.tenant_id', '?::int')} else 2147483647 end as free
         from (select distinct tenant_id from heads) t
     )
     select r.tenant_id, r.thread_id, r.run_id, r.slots, r.throttle, r.debounce
       from ranked r join room using (tenant_id)
      where r.n <= room.free
      order by r.turn, r.served_at nulls first, r.served_from, r.version
      limit ?`,
    [at, at, limit, limit, limit, batch],
  );
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    threadId: r.thread_id,
    runId: r.run_id,
    slots: r.slots,
    ...(r.throttle ? { throttle: r.throttle } : {}),
    ...(r.debounce ? { debounce: r.debounce } : {}),
  }));
}

/**
 * Notes that the admission pass started a held run of each of these keys (`slot_turns`): keys at the same
 * place in the queue take turns by it. Rows of keys not served for a day go.
 */
export async function noteSlotTurns(
  sql: SqlExecutor,
  tenantId: string,
  keys: readonly string[],
  at: string,
): Promise<void> {
  if (keys.length === 0) return;
  await sql.query(
    `insert into ${sql.table('slot_turns')} (tenant_id, slot_key, served_at)
     select ?, k, ?::timestamptz from unnest(array[?]::text[]) k
     on conflict (tenant_id, slot_key) do update set served_at = greatest(${sql.table('slot_turns')}.served_at, excluded.served_at)`,
    [tenantId, at, [...keys]],
  );
}

/** Removes the turns of keys not served since `before`. */
export async function pruneSlotTurns(sql: SqlExecutor, before: string): Promise<void> {
  await sql.query(`delete from ${sql.table('slot_turns')} where served_at < ?::timestamptz`, [before]);
}

/** A run that has not started whose queued TTL is up (see `expiredQueuedRuns`). */
export interface ExpiredQueuedRun {
  tenantId: string;
  threadId: string;
  runId: string;
}

/**
 * The queued runs (held for admission or behind their thread's run) whose queued TTL is up at `at`, oldest
 * deadline first, through `runs_queue_expiry_idx` (queued runs with a TTL only). What the admission pass
 * asks the threads to end: the deadline is in the run's row, so after a crash the next beat of any
 * orchestrator finds it.
 */
export async function expiredQueuedRuns(sql: SqlExecutor, at: string, batch: number): Promise<ExpiredQueuedRun[]> {
  const rows = await sql.query<{ tenant_id: string; thread_id: string; run_id: string }>(
    `select tenant_id, thread_id, run_id from ${sql.table('runs')}
      where status = 'queued' and queued_until is not null and queued_until <= ?::timestamptz
      order by queued_until limit ?`,
    [at, batch],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, threadId: r.thread_id, runId: r.run_id }));
}

/** A debounced run a later request of its key superseded (see `supersededRuns`). */
export interface SupersededRun {
  tenantId: string;
  threadId: string;
  runId: string;
  debounce: RunDebounce;
}

/**
 * The queued debounced runs a later request of their key superseded (a later queued run of the key exists),
 * through `runs_debounce_idx`, with the debounce their thread's queue has for them. What the admission pass
 * asks the threads to end (the admission finds the latest again under the key's lock).
 */
export async function supersededRuns(sql: SqlExecutor, batch: number): Promise<SupersededRun[]> {
  const rows = await sql.query<{ tenant_id: string; thread_id: string; run_id: string; debounce: RunDebounce | null }>(
    `select r.tenant_id, r.thread_id, r.run_id,
            (select q->'debounce' from jsonb_array_elements(t.state->'queue') q where q->>'runId' = r.run_id limit 1)
              as debounce
       from ${sql.table('runs')} r
       join ${sql.table('threads')} t on t.tenant_id = r.tenant_id and t.thread_id = r.thread_id
      where r.status = 'queued' and r.debounce_key is not null
        and r.run_id <> ${debounceLatest(sql, 'r.tenant_id', 'r.debounce_key')}
      order by r.waiting_since limit ?`,
    [batch],
  );
  return rows.flatMap((r) =>
    r.debounce ? [{ tenantId: r.tenant_id, threadId: r.thread_id, runId: r.run_id, debounce: r.debounce }] : [],
  );
}
