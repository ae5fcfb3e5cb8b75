import {
  InvariantError,
  ledgerWrite,
  PoisonMessageError,
  TransientError,
  type LedgerSnapshot,
  type OutboxMessage,
} from '@ratchet/domain';
import { markSentCte, numbered, type SqlExecutor } from './sql';
import {
  COLUMNS,
  effectIdentity,
  outboxValues,
  startedByValues,
  toRecord,
  type EffectDbRow,
  type EffectHolder,
  type EffectRecord,
  type EffectResolution,
  type EffectState,
  type StartEffect,
} from './effect-ledger.records';

/**
 * The tool executor's effect ledger (schema `tools`). Pass a ServiceTx so the ledger write commits with
 * the inbox claim and the outbox message it goes with; `db.sql` works for reads.
 */
export class EffectLedgerRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /**
   * The statements every tool call runs (the claim, the outcome) are prepared: parsed and planned once
   * per connection instead of once per call (their planning cost as much as running them).
   */
  private prepared<R>(what: string, build: () => string, values: readonly unknown[]): Promise<R[]> {
    const name = `${this.sql.schema}.effects.${what}`;
    return this.sql.prepared<R>(name, numbered(name, build), values);
  }

  async get(key: string, holder?: string): Promise<EffectRecord | undefined> {
    const rows = await this.sql.query<EffectDbRow>(
      `select ${COLUMNS} from ${this.sql.table('effects')} where key = ?`,
      [key],
    );
    return rows[0] && toRecord(rows[0], holder);
  }

  /**
   * Claims the key for a new effect, held by `holder` while it acts. Returns 'inserted' when this call
   * created the row; 'stopped' (and writes nothing) when the call's run was stopped before it started;
   * otherwise the existing row (a concurrent claimer's insert is waited for, so the row returned is
   * committed).
   */
  async recordStarted(effect: StartEffect, holder?: EffectHolder): Promise<'inserted' | 'stopped' | EffectRecord> {
    const rows = await this.prepared<{ stopped: boolean; inserted: number }>(
      'claim',
      () => `with stopped as (
         select exists (select 1 from ${this.sql.table('stopped_runs')} where tenant_id = ? and run_id = ?) as yes),
       ins as (
         insert into ${this.sql.table('effects')}
           (key, tenant_id, thread_id, run_id, call_id, tool, kind, state, attempts, command, traceparent,
            leased_by, lease_until)
         select ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, 'started', 1, ?::jsonb, ?::text,
                ?::text, now() + ?::float8 * interval '1 millisecond'
          where not (select yes from stopped)
         on conflict (key) do nothing returning 1)
       select (select yes from stopped) as stopped, (select count(*) from ins)::int as inserted`,
      [
        effect.tenantId,
        effect.runId,
        ...effectIdentity(effect),
        ...startedByValues(effect),
        holder?.holder ?? null,
        holder?.leaseMs ?? null,
      ],
    );
    if (rows[0]?.inserted === 1) return 'inserted';
    const existing = await this.get(effect.key, holder?.holder);
    if (existing) return existing;
    if (rows[0]?.stopped) return 'stopped';
    throw new TransientError(
      `effect ${effect.key}: insert conflicted but no row is visible (removed meanwhile); trying again later`,
      'effect.vanished',
    );
  }

  /**
   * A call of a stopped run that never started: recorded `cancelled` (no effect), with its result message
   * for the thread, in one statement. False (nothing written) when the key has a row already.
   */
  async recordCancelled(effect: StartEffect, result: unknown, message: OutboxMessage): Promise<boolean> {
    const rows = await this.sql.query<{ recorded: number }>(
      `with e as (
         insert into ${this.sql.table('effects')}
           (key, tenant_id, thread_id, run_id, call_id, tool, kind, state, attempts, result, command, traceparent,
            finished_at)
         values (?, ?, ?, ?, ?, ?, ?, 'cancelled', 0, ?::jsonb, ?::jsonb, ?, now())
         on conflict (key) do nothing returning 1
       ), o as (
         insert into ${this.sql.table('outbox')} (id, subject, headers, payload)
         select ?, ?, ?::jsonb, ?::jsonb where exists (select 1 from e) returning 1
       )
       select (select count(*) from e)::int as recorded`,
      [...effectIdentity(effect), JSON.stringify(result), ...startedByValues(effect), ...outboxValues(message)],
    );
    return rows[0]?.recorded === 1;
  }

  /** Records that a run stopped (idempotent): its calls that have not started will never run. */
  async recordStoppedRun(stop: { tenantId: string; runId: string; threadId: string; reason: string }): Promise<void> {
    await this.sql.run(
      `insert into ${this.sql.table('stopped_runs')} (tenant_id, run_id, thread_id, reason) values (?, ?, ?, ?)
       on conflict do nothing`,
      [stop.tenantId, stop.runId, stop.threadId, stop.reason],
    );
  }

  /**
   * A retry of an effect that is still `started` or `uncertain`: counts the attempt, and `traceparent`
   * (when given) becomes the claiming span, so the next attempt links to this one. With a `holder`, only
   * when nobody else holds it right now (its lease ran out): undefined otherwise, and nothing changes.
   */
  async recordAttempt(key: string, traceparent?: string, holder?: EffectHolder): Promise<number | undefined> {
    const rows = await this.sql.query<{ attempts: number }>(
      `update ${this.sql.table('effects')}
       set attempts = attempts + 1, state = 'started', updated_at = now(), traceparent = coalesce(?, traceparent),
           leased_by = coalesce(?, leased_by),
           lease_until = case when ?::text is null then lease_until
                              else now() + ?::float8 * interval '1 millisecond' end
       where key = ?${holder ? ` and (lease_until is null or lease_until <= now() or leased_by = ?)` : ''}
       returning attempts`,
      [
        traceparent ?? null,
        holder?.holder ?? null,
        holder?.holder ?? null,
        holder?.leaseMs ?? null,
        key,
        ...(holder ? [holder.holder] : []),
      ],
    );
    const row = rows[0];
    if (!row) {
      if (holder) return undefined;
      throw new InvariantError(`effect ${key} was never started`, 'effect.not_started');
    }
    return row.attempts;
  }

  /** Renews the leases `holder` has on effects still `started`; returns the keys renewed. */
  async renewLeases(keys: readonly string[], holder: string, leaseMs: number): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await this.sql.query<{ key: string }>(
      `set local synchronous_commit = off;
       update ${this.sql.table('effects')} set lease_until = now() + ?::float8 * interval '1 millisecond'
        where key in (?) and leased_by = ? and state = 'started'
       returning key`,
      [leaseMs, keys, holder],
    );
    return new Set(rows.map((r) => r.key));
  }

  /**
   * Records the outcome of the attempt that read the row as `read` (its claim: `started` and its attempt
   * number; an escalation: the same). Compare and set: only while the row is still in that state and
   * held by that attempt — a late attempt never writes over a human's answer or a newer attempt. Returns
   * 'recorded', or the row as it is now when it moved on (then nothing is written).
   */
  async recordOutcome(
    key: string,
    state: Exclude<EffectState, 'started'>,
    result: unknown,
    read: LedgerSnapshot,
  ): Promise<'recorded' | EffectRecord> {
    return this.recordOutcomeWithMessage(key, state, result, undefined, read);
  }

  /**
   * `recordOutcome` and the outbox row of the result message as one statement: both or neither (the
   * row is only inserted when the effect was updated), so on `db.sql` it needs no transaction of its own.
   */
  async recordOutcomeWithMessage(
    key: string,
    state: Exclude<EffectState, 'started'>,
    result: unknown,
    message: OutboxMessage | undefined,
    read: LedgerSnapshot,
    /** Outbox rows published after earlier commits, marked sent with this one (see ThreadTx.markSent). */
    marks: readonly string[] = [],
  ): Promise<'recorded' | EffectRecord> {
    if (ledgerWrite(read, read, state, 'attempt') === 'refused')
      throw new PoisonMessageError(
        `effect ${key}: an attempt cannot move it from ${read.state} to ${state}`,
        'effect.backwards',
      );
    const rows = await this.prepared<{ updated: number }>(
      'outcome',
      () => `with u as (
         update ${this.sql.table('effects')}
         set state = ?, result = ?::jsonb, finished_at = now(), updated_at = now()
         where key = ? and state = ? and attempts = ? returning 1
       ), o as (
         insert into ${this.sql.table('outbox')} (id, subject, headers, payload)
         select ?::text, ?::text, ?::jsonb, ?::jsonb where ?::boolean and exists (select 1 from u) returning 1
       ), ${markSentCte(this.sql, 'm', '?')}
       select (select count(*) from u)::int as updated, (select count(*) from o)::int as enqueued,
              (select count(*) from m)::int as marked`,
      [
        state,
        result === undefined ? null : JSON.stringify(result),
        key,
        read.state,
        read.attempts,
        message?.id ?? '',
        message?.subject ?? '',
        JSON.stringify(message?.headers ?? {}),
        JSON.stringify(message?.payload ?? null),
        message !== undefined,
        JSON.stringify(marks),
      ],
    );
    if (rows[0]?.updated === 1) return 'recorded';
    // Moved on meanwhile (or never there): read it in a new snapshot, after the writer that moved it committed.
    const now = await this.get(key);
    if (!now) throw new PoisonMessageError(`effect ${key} was never started`, 'effect.unknown');
    return now;
  }

  /**
   * A `pure` call's outcome and result message, recorded after the tool ran with no `started` row before
   * it: one statement inserts the row already finished (`attempts` 1) and the outbox row, both or
   * neither, so on `db.sql` it is one round trip and one commit. A row an earlier attempt left `started`
   * (its process died mid-call, or it ran before pure calls skipped `started`) is finished instead, with
   * one more attempt. Returns 'recorded', or the row that was already there and is left as it was
   * (finished by another delivery, or another tenant's key): then no message is enqueued, and the caller
   * re-sends what that row holds.
   */
  async recordPureOutcome(
    effect: StartEffect,
    state: Exclude<EffectState, 'started'>,
    result: unknown,
    message: OutboxMessage,
    /** Outbox rows published after earlier commits, marked sent with this one (see ThreadTx.markSent). */
    marks: readonly string[] = [],
  ): Promise<'recorded' | EffectRecord> {
    const effects = this.sql.table('effects');
    const rows = await this.prepared<{ recorded: number }>(
      'pure-outcome',
      () => `with e as (
         insert into ${effects} as e
           (key, tenant_id, thread_id, run_id, call_id, tool, kind, state, attempts, result, command, traceparent,
            finished_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, 1, ?::jsonb, ?::jsonb, ?, now())
         on conflict (key) do update
           set state = excluded.state, result = excluded.result, attempts = e.attempts + 1,
               finished_at = now(), updated_at = now(), traceparent = coalesce(excluded.traceparent, e.traceparent)
           where e.state = 'started' and e.tenant_id = excluded.tenant_id
         returning 1
       ), o as (
         insert into ${this.sql.table('outbox')} (id, subject, headers, payload)
         select ?::text, ?::text, ?::jsonb, ?::jsonb where exists (select 1 from e) returning 1
       ), ${markSentCte(this.sql, 'm', '?')}
       select (select count(*) from e)::int as recorded, (select count(*) from o)::int as enqueued,
              (select count(*) from m)::int as marked`,
      [
        ...effectIdentity(effect),
        state,
        result === undefined ? null : JSON.stringify(result),
        ...startedByValues(effect),
        ...outboxValues(message),
        JSON.stringify(marks),
      ],
    );
    if (rows[0]?.recorded === 1) return 'recorded';
    // The conflicting row may have committed after this statement's snapshot: read it in a new one.
    const existing = await this.get(effect.key);
    if (!existing)
      throw new TransientError(
        `effect ${effect.key}: insert conflicted but no row is visible (removed meanwhile); trying again later`,
        'effect.vanished',
      );
    return existing;
  }

  /** A redelivery answered from the ledger (the stored result re-sent, the tool not run). */
  async recordDedupHit(key: string): Promise<number> {
    const rows = await this.sql.query<{ dedup_hits: number }>(
      `update ${this.sql.table('effects')} set dedup_hits = dedup_hits + 1 where key = ? returning dedup_hits`,
      [key],
    );
    const row = rows[0];
    if (!row) throw new InvariantError(`effect ${key} was never started`, 'effect.not_started');
    return row.dedup_hits;
  }

  /**
   * Records a human's answer to an `uncertain` effect. Only an effect that is still `uncertain` (and of
   * this tenant) takes an answer: nothing changes otherwise, so a repeated or late answer changes nothing.
   * `happened`/`fail` settle the effect (`succeeded`/`failed` with `result`); `retry` puts it back to
   * `started` with one more attempt, for the caller to run it again. Returns the row's new state and
   * attempt (the retry's, for its outcome's compare and set), or undefined when nothing changed.
   */
  async recordResolution(
    tenantId: string,
    key: string,
    resolution: EffectResolution,
    by: string,
    result?: unknown,
  ): Promise<LedgerSnapshot | undefined> {
    const state = resolution === 'happened' ? 'succeeded' : resolution === 'fail' ? 'failed' : 'started';
    const settles = resolution !== 'retry';
    const rows = await this.sql.query<{ state: EffectState; attempts: number }>(
      `update ${this.sql.table('effects')}
       set state = ?, resolution = ?, resolved_by = ?, resolved_at = now(), updated_at = now(),
           attempts = attempts + ${settles ? 0 : 1},
           result = ${settles ? '?::jsonb' : 'result'}, finished_at = ${settles ? 'now()' : 'null'}
       where key = ? and tenant_id = ? and state = 'uncertain'
       returning state, attempts`,
      settles
        ? [state, resolution, by, JSON.stringify(result ?? null), key, tenantId]
        : [state, resolution, by, key, tenantId],
    );
    return rows[0];
  }

  async listByThread(tenantId: string, threadId: string): Promise<EffectRecord[]> {
    const rows = await this.sql.query<EffectDbRow>(
      `select ${COLUMNS} from ${this.sql.table('effects')}
       where tenant_id = ? and thread_id = ? order by started_at, key`,
      [tenantId, threadId],
    );
    return rows.map((r) => toRecord(r));
  }
}
