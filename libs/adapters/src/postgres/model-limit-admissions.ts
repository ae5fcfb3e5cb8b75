import { takeTurn, type AdmissionDecision, type LimitWindow, type ProviderLimit } from '@ratchet/domain';
import type { Database } from './orm';
import { inTransaction, valuesList } from './sql';

/** One model call asking a provider limit for admission. */
export interface AdmissionRequest {
  /** The call's identity under the limit (the same while it waits; a call asked again after it went gets another). */
  callId: string;
  tenantId: string;
  /** Its tokens as estimated before the call. */
  estimate: number;
  /** The longest the call may be in flight (its step budget): past it, a call whose worker died no longer counts. */
  maxDurationMs: number;
}

export interface LimitOptions {
  /** How long a decision may take to reach the provider as a request, ms (added to the window). */
  guardMs: number;
  /** How long a call refused by the bound on calls at once waits before it asks again, ms. */
  concurrentRetryMs: number;
}

/** A limit's answer to a call, and the id its admission is settled by (when it goes). */
export interface LimitAnswer {
  decision: AdmissionDecision;
  admissionId: string;
}

interface Row {
  kind: 'row' | 'flight';
  call_id: string;
  tenant_id: string;
  at_ms: number;
  tokens: number;
  went: boolean;
  in_flight: number;
}

/** What one decision of a batch writes. */
interface Writes {
  deletes: string[];
  goes: Array<{ callId: string; at: number; expires: number }>;
  inserts: Array<{ call: AdmissionRequest; id: string; at: number; went: number | null }>;
}

/** How often one process prunes a limit's admissions that left the window, ms. */
const PRUNE_EVERY_MS = 1_000;
/** Calls of one limit decided in one transaction at most. */
const BATCH_MAX = 256;

/**
 * The admissions of provider limits, shared by every orchestrator through Postgres (ADR 0044): the calls
 * of one limit that ask at once in this process are decided together in one transaction, serialised with
 * every other replica's by an advisory lock per limit, each in its turn by the pure `takeTurn` on the
 * database's clock (one clock for every replica). A call reserved for later finds its reservation when
 * it comes back and goes without deciding again.
 */
export class ModelLimitAdmissions {
  private readonly pruned = new Map<string, number>();
  /**
   * By limit and tenant, when the calls this process told to wait for their share ask again (they hold no
   * row): a hint only, so the next such call is told a later window and a flood comes back spread out.
   * Lost with the process, it only costs calls that wake and wait again.
   */
  private readonly shareWaits = new Map<string, Map<string, number[]>>();
  private readonly queues = new Map<
    string,
    Array<{ call: AdmissionRequest; resolve: (a: LimitAnswer) => void; reject: (e: unknown) => void }>
  >();
  private readonly draining = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly options: LimitOptions,
  ) {}

  /** Asks the limit for one call; calls asking meanwhile are decided with it, in the order they asked. */
  acquire(limit: ProviderLimit, call: AdmissionRequest): Promise<LimitAnswer> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(limit.name) ?? [];
      queue.push({ call, resolve, reject });
      this.queues.set(limit.name, queue);
      if (!this.draining.has(limit.name)) void this.drain(limit);
    });
  }

  /** The call ended: it no longer counts as in flight, and its tokens are what the provider reported (when it did). */
  async settle(limitName: string, callId: string, tokens: number | undefined): Promise<void> {
    await this.db.sql.run(
      `update ${this.db.sql.table('model_limit_admissions')}
          set ended_at = clock_timestamp(), tokens = coalesce(?::int, tokens)
        where limit_name = ? and call_id = ? and ended_at is null`,
      [tokens ?? null, limitName, callId],
    );
  }

  private async drain(limit: ProviderLimit): Promise<void> {
    this.draining.add(limit.name);
    try {
      for (;;) {
        const queue = this.queues.get(limit.name) ?? [];
        if (queue.length === 0) break;
        const batch = queue.splice(0, BATCH_MAX);
        try {
          const answers = await this.decideBatch(
            limit,
            batch.map((b) => b.call),
          );
          batch.forEach((b, i) => b.resolve(answers[i]!));
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      }
    } finally {
      this.draining.delete(limit.name);
      this.queues.delete(limit.name);
    }
  }

  private decideBatch(limit: ProviderLimit, calls: readonly AdmissionRequest[]): Promise<LimitAnswer[]> {
    const t = this.db.sql.table('model_limit_admissions');
    const span = limit.windowMs + this.options.guardMs;
    const ids = [...new Set(calls.map((c) => c.callId))];
    // A call's family: its own row and the rows of the times it was asked again after it went.
    const again = ids.map((id) => `${id.replace(/[\\%_]/g, (ch) => `\\${ch}`)}:again:%`);
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      // One decision per limit at a time, on every replica: the window read below is the window written.
      const [clock] = await sql.query<{ now_ms: number }>(
        `select pg_advisory_xact_lock(hashtextextended(?, 0)), (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms`,
        [`ratchet.model-limit:${limit.name}`],
      );
      const now = Number(clock!.now_ms);
      // The limit's rows still in its window, the batch's own rows however old (a late reservation, the
      // requests a call made before), and the calls in flight however old: one statement.
      const rows = await sql.query<Row>(
        `select 'row' as kind, call_id, tenant_id, (extract(epoch from at) * 1000)::float8 as at_ms, tokens,
                went_at is not null as went, 0 as in_flight
           from ${t} where limit_name = ?
            and (at > to_timestamp(? / 1000.0) or call_id in (?) or call_id like any (array[?]::text[]))
         union all
         select 'flight', '', '', 0, 0, false, count(*)::int from ${t}
          where limit_name = ? and went_at is not null and ended_at is null and expires_at > to_timestamp(? / 1000.0)`,
        [limit.name, now - span, ids, again, limit.name, now],
      );
      const all = rows
        .filter((r) => r.kind === 'row')
        .map((r) => ({ id: r.call_id, at: Number(r.at_ms), went: r.went, tokens: r.tokens, tenantId: r.tenant_id }));
      const ownOf = (id: string) => all.filter((r) => r.id === id || r.id.startsWith(`${id}:again:`));
      // The batch's own rows are in the window too: a call decided first sees the places of those after it
      // (and a call that went and is asked again, its earlier requests).
      let window: LimitWindow = {
        admissions: all.filter((r) => r.at > now - span).sort((a, b) => a.at - b.at),
        inFlight: Number(rows.find((r) => r.kind === 'flight')?.in_flight ?? 0),
        shareWaits: this.pendingShareWaits(limit.name, now),
      };
      const writes: Writes = { deletes: [], goes: [], inserts: [] };
      const told: Array<{ tenantId: string; at: number }> = [];
      const answers = calls.map((call): LimitAnswer => {
        const turn = takeTurn(limit, window, call, ownOf(call.callId), now, this.options);
        window = turn.window;
        if (!turn.decision.go && turn.decision.by === 'share')
          told.push({ tenantId: call.tenantId, at: turn.decision.at });
        for (const w of turn.writes) {
          if (w.kind === 'delete') writes.deletes.push(w.id);
          else if (w.kind === 'go') writes.goes.push({ callId: w.id, at: w.at, expires: now + call.maxDurationMs });
          else writes.inserts.push({ call, id: w.id, at: w.at, went: w.went ? now : null });
        }
        return { decision: turn.decision, admissionId: turn.admissionId };
      });
      await this.write(sql, t, limit, span, now, writes);
      this.rememberShareWaits(limit.name, told);
      return answers;
    });
  }

  /** How many of each tenant's calls this process told to wait for their share still wait. */
  private pendingShareWaits(limitName: string, now: number): Record<string, number> {
    const byTenant = this.shareWaits.get(limitName);
    const out: Record<string, number> = {};
    if (!byTenant) return out;
    for (const [tenant, times] of byTenant) {
      const pending = times.filter((at) => at > now);
      if (pending.length === 0) byTenant.delete(tenant);
      else {
        byTenant.set(tenant, pending);
        out[tenant] = pending.length;
      }
    }
    return out;
  }

  private rememberShareWaits(limitName: string, told: ReadonlyArray<{ tenantId: string; at: number }>): void {
    if (told.length === 0) return;
    const byTenant = this.shareWaits.get(limitName) ?? new Map<string, number[]>();
    for (const { tenantId, at } of told) {
      const times = byTenant.get(tenantId);
      if (times) times.push(at);
      else byTenant.set(tenantId, [at]);
    }
    this.shareWaits.set(limitName, byTenant);
  }

  private async write(
    sql: { run(text: string, params: readonly unknown[]): Promise<number> },
    t: string,
    limit: ProviderLimit,
    span: number,
    now: number,
    writes: Writes,
  ): Promise<void> {
    if (writes.deletes.length > 0)
      await sql.run(`delete from ${t} where limit_name = ? and call_id in (?)`, [limit.name, writes.deletes]);
    if (writes.goes.length > 0)
      await sql.run(
        `update ${t} a set at = to_timestamp(v.at / 1000.0), went_at = to_timestamp(? / 1000.0),
                expires_at = to_timestamp(v.expires / 1000.0)
           from (values ${valuesList(writes.goes.length, '(?, ?::float8, ?::float8)')}) as v(call_id, at, expires)
          where a.limit_name = ? and a.call_id = v.call_id`,
        [now, ...writes.goes.flatMap((g) => [g.callId, g.at, g.expires]), limit.name],
      );
    if (writes.inserts.length > 0)
      await sql.run(
        `insert into ${t} (limit_name, call_id, tenant_id, at, tokens, went_at, expires_at)
         values ${valuesList(
           writes.inserts.length,
           '(?, ?, ?, to_timestamp(?::float8 / 1000.0), ?, to_timestamp(?::float8 / 1000.0), to_timestamp(?::float8 / 1000.0))',
         )}`,
        writes.inserts.flatMap((i) => [
          limit.name,
          i.id,
          i.call.tenantId,
          i.at,
          i.call.estimate,
          i.went,
          i.at + i.call.maxDurationMs,
        ]),
      );
    // What left the window long ago is no longer needed (a call in flight stays until it ends or expires):
    // pruned by one decision a second per limit in this process.
    if (now - (this.pruned.get(limit.name) ?? 0) >= PRUNE_EVERY_MS) {
      this.pruned.set(limit.name, now);
      await sql.run(
        `delete from ${t} where limit_name = ? and at < to_timestamp(? / 1000.0)
            and (ended_at is not null or expires_at < to_timestamp(? / 1000.0))`,
        [limit.name, now - span, now],
      );
    }
  }
}
