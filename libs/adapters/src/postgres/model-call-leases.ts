import type { SqlExecutor } from './sql';

/**
 * Who is running which model call, kept on the call's outbox row (the row id is the call's command id):
 * `available_at` is the lease's end and `leased_by` its holder. What the row says decides who may run the
 * call: one worker at a time, and only while the call is still the thread's current one.
 *
 * - The process that commits a call and runs it itself writes the row leased to itself (no extra
 *   statement). A worker that takes a call off the bus `claim`s the row before it calls the model.
 * - Every holder `renew`s all its leases in one statement, every third of the lease; a lease it no
 *   longer holds (another worker has it, the watchdog fenced it, or the thread moved on: the run was
 *   cancelled, the step was answered) is not renewed, and its call is aborted.
 * - The watchdog `fence`s the row of a call nobody holds or took for too long (its message was lost)
 *   before it commands the next attempt: from then on nobody can claim the old one.
 */

/** The end of a fenced lease: the call was given up on and replaced; nobody may take it any more. */
const FENCED = `'infinity'::timestamptz`;

export type ModelCallClaim =
  /** This worker holds the call now: run it. */
  | 'claimed'
  /** The thread no longer waits for this call (answered, replaced by a later attempt, the run ended). */
  | 'stale'
  /** Another worker holds it: its lease runs (it is alive, or it died and the lease has not run out). */
  | 'held'
  /** The watchdog gave up on it and replaced it: nobody may take it any more. */
  | 'fenced'
  /** No row (pruned long after it was sent): the call is current, run it without a lease. */
  | 'unleased'
  /** A redelivery the run's model-call budget has no room for: do not call; the decider fails the run. */
  | 'over-budget';

export interface ModelCallRef {
  /** The outbox row id (= the command id). */
  id: string;
  tenantId: string;
  threadId: string;
  commandId: string;
}

/** The thread's current model call is `cmd`: the condition, on the `threads` row `t`. */
const CURRENT = (t: string, cmd: string) => `${t}.state->'active'->'modelCall'->>'commandId' = ${cmd}`;

export class ModelCallLeases {
  constructor(private readonly sql: SqlExecutor) {}

  /**
   * Takes the lease of a call received from the bus, if it is free (never leased, or its lease ran out)
   * and the call is still the thread's current one. One statement; concurrent claims and fences of one
   * row are serialised by its row lock, so at most one of them wins.
   */
  async claim(
    call: ModelCallRef,
    holder: string,
    leaseMs: number,
    options: { redelivery?: boolean } = {},
  ): Promise<ModelCallClaim> {
    // A redelivery is one more call to the provider than the log has counted: it needs room in the
    // run's model-call budget (spent and limits as the thread's state has them).
    const room = options.redelivery
      ? `coalesce((t.state->'active'->'spent'->>'modelCalls')::int, 0) + 1
           <= coalesce((t.state->'active'->'limits'->>'modelCalls')::int, 2147483647)`
      : 'true';
    const rows = await this.sql.query<{
      current: boolean;
      room: boolean;
      found: boolean;
      fenced: boolean;
      claimed: boolean;
    }>(
      `with cur as (
         select t.tenant_id is not null as current, coalesce(${room}, true) as room
           from (select 1) one
           left join ${this.sql.table('threads')} t
             on t.tenant_id = ? and t.thread_id = ? and ${CURRENT('t', '?')}),
       claimed as (
         update ${this.sql.table('outbox')} o
            set available_at = now() + ?::float8 * interval '1 millisecond', leased_by = ?
          where o.id = ? and (select current and room from cur)
            and (o.available_at is null or o.available_at <= now())
         returning 1)
       select (select current from cur) as current, (select room from cur) as room,
              exists (select 1 from ${this.sql.table('outbox')} where id = ?) as found,
              exists (select 1 from ${this.sql.table('outbox')} where id = ? and available_at = ${FENCED}) as fenced,
              exists (select 1 from claimed) as claimed`,
      [call.tenantId, call.threadId, call.commandId, leaseMs, holder, call.id, call.id, call.id],
    );
    const row = rows[0];
    if (!row?.current) return 'stale';
    if (!row.room) return 'over-budget';
    if (row.claimed) return 'claimed';
    if (row.fenced) return 'fenced';
    return row.found ? 'held' : 'unleased';
  }

  /**
   * The lease on a call's row: who last claimed it (null: nobody yet, or its lease was handed back) and how
   * long its lease still runs (0 when it ran out; Infinity when fenced). Undefined: no row.
   */
  async leaseOf(id: string): Promise<{ holder: string | null; leftMs: number } | undefined> {
    const rows = await this.sql.query<{ leased_by: string | null; fenced: boolean; left_ms: number | null }>(
      `select leased_by, available_at = ${FENCED} as fenced,
              case when available_at is null or available_at = ${FENCED} then 0
                   else greatest(0, extract(epoch from (available_at - now())) * 1000)::float8 end as left_ms
         from ${this.sql.table('outbox')} where id = ?`,
      [id],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { holder: row.leased_by, leftMs: row.fenced ? Infinity : Number(row.left_ms ?? 0) };
  }

  /**
   * Renews the leases `holder` still has on calls that are still current, in one statement; returns the
   * ids renewed. A lease that ran out is renewed too if nobody took it meanwhile (a pause of the holder is
   * not a reason to repeat a call); a fenced one never is.
   */
  async renew(ids: readonly string[], holder: string, leaseMs: number): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    // Not waiting for the WAL flush: a renewal lost in a crash of the database only shortens a lease.
    const rows = await this.sql.query<{ id: string }>(
      `set local synchronous_commit = off;
       update ${this.sql.table('outbox')} o
          set available_at = now() + ?::float8 * interval '1 millisecond'
         from ${this.sql.table('threads')} t
        where o.id in (?) and o.leased_by = ? and o.available_at <> ${FENCED}
          and t.tenant_id = o.payload->>'tenantId' and t.thread_id = o.payload->>'threadId'
          and ${CURRENT('t', `o.payload->>'commandId'`)}
       returning o.id`,
      [leaseMs, ids, holder],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Gives up on a call nobody holds: its lease is free (or it was never taken) and has been for
   * `idleMs` since it was published or its last lease ended. True when this fenced it (the caller may now
   * command the next attempt); false when a worker holds it or took it meanwhile.
   */
  async fence(id: string, idleMs: number): Promise<boolean> {
    const fenced = await this.sql.run(
      `update ${this.sql.table('outbox')}
          set available_at = ${FENCED}, sent_at = coalesce(sent_at, now())
        where id = ?
          and (available_at = ${FENCED} or (
               (available_at is null or available_at <= now())
               and coalesce(available_at, sent_at, created_at) < now() - ?::float8 * interval '1 millisecond'))`,
      [id, idleMs],
    );
    return fenced === 1;
  }
}
