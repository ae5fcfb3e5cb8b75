import { admit, fitsAt, type AdmissionDecision, type ProviderLimit } from '@ratchet/domain';
import type { Database } from './orm';
import { inTransaction } from './sql';

/** One model call asking a provider limit for admission. */
export interface AdmissionRequest {
  /** The call's identity under the limit (a redelivered call that may have gone asks under another). */
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

interface AdmissionRow {
  call_id: string;
  at_ms: number;
  tokens: number;
  went: boolean;
  in_flight: boolean;
}

/**
 * The admissions of provider limits, shared by every orchestrator through Postgres (ADR 0044): one
 * transaction per call asks, serialised per limit by an advisory lock, decided by the pure `admit` on
 * the database's clock (one clock for every replica). A call reserved for later finds its reservation
 * when it comes back and goes without deciding again.
 */
export class ModelLimitAdmissions {
  constructor(
    private readonly db: Database,
    private readonly options: LimitOptions,
  ) {}

  async acquire(limit: ProviderLimit, call: AdmissionRequest): Promise<LimitAnswer> {
    const t = this.db.sql.table('model_limit_admissions');
    const span = limit.windowMs + this.options.guardMs;
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      // One decision per limit at a time, on every replica: the window read below is the window written.
      const [clock] = await sql.query<{ now_ms: number }>(
        `select pg_advisory_xact_lock(hashtextextended(?, 0)), (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms`,
        [`ratchet.model-limit:${limit.name}`],
      );
      const now = Number(clock!.now_ms);
      const rows = await sql.query<AdmissionRow>(
        `select call_id, (extract(epoch from at) * 1000)::float8 as at_ms, tokens, went_at is not null as went,
                (went_at is not null and ended_at is null and expires_at > to_timestamp(? / 1000.0)) as in_flight
           from ${t}
          where limit_name = ? and (at > to_timestamp(? / 1000.0) or call_id = ?)
          order by at`,
        [now, limit.name, now - span, call.callId],
      );
      const own = rows.find((r) => r.call_id === call.callId);
      const others = rows.filter((r) => r.call_id !== call.callId && Number(r.at_ms) > now - span);
      const inFlight = others.filter((r) => r.in_flight).length;
      if (own && !own.went) {
        const at = Number(own.at_ms);
        // Early: it waits for its turn again.
        if (at > now)
          return {
            decision: { go: false, at, by: limit.requests !== undefined ? 'requests' : 'tokens', reserve: true },
            admissionId: call.callId,
          };
        // Its turn, or late (its worker came back after the guard): it goes now if every window that holds
        // now has room for it, else it asks anew (behind the queue).
        const onTime = now <= at + this.options.guardMs;
        const fits =
          onTime ||
          fitsAt(
            limit,
            others.map((r) => ({ at: Number(r.at_ms), tokens: r.tokens })),
            now,
            call.estimate,
            this.options.guardMs,
          );
        if (fits) {
          // A bound on calls at once is asked at the moment it goes.
          if (limit.concurrent !== undefined && inFlight >= limit.concurrent)
            return {
              decision: await this.release(sql, t, limit, call, {
                go: false,
                at: now + this.options.concurrentRetryMs,
                by: 'concurrent',
                reserve: false,
              }),
              admissionId: call.callId,
            };
          await sql.run(
            `update ${t} set at = to_timestamp(? / 1000.0), went_at = to_timestamp(? / 1000.0),
                    expires_at = to_timestamp(? / 1000.0)
              where limit_name = ? and call_id = ?`,
            [onTime ? at : now, now, now + call.maxDurationMs, limit.name, call.callId],
          );
          return { decision: { go: true, at: now }, admissionId: call.callId };
        }
      }
      // A reservation past its turn is dropped; a call that went keeps its row (its request counts in the
      // window), and this one, a new request of the same call, asks under a new id.
      if (own && !own.went)
        await sql.run(`delete from ${t} where limit_name = ? and call_id = ?`, [limit.name, call.callId]);
      const id = own?.went ? `${call.callId}:again:${now}` : call.callId;
      const decision = admit(limit, {
        admissions: others.map((r) => ({ at: Number(r.at_ms), tokens: r.tokens })),
        inFlight,
        now,
        estimate: call.estimate,
        guardMs: this.options.guardMs,
        concurrentRetryMs: this.options.concurrentRetryMs,
      });
      if (decision.go || decision.reserve) {
        await sql.run(
          `insert into ${t} (limit_name, call_id, tenant_id, at, tokens, went_at, expires_at)
           values (?, ?, ?, to_timestamp(? / 1000.0), ?, ${decision.go ? 'to_timestamp(? / 1000.0)' : 'null'}, to_timestamp(? / 1000.0))`,
          [
            limit.name,
            id,
            call.tenantId,
            decision.at,
            call.estimate,
            ...(decision.go ? [now] : []),
            decision.at + call.maxDurationMs,
          ],
        );
      }
      // What left the window long ago is no longer needed (a call in flight stays until it ends or expires).
      await sql.run(
        `delete from ${t} where limit_name = ? and at < to_timestamp(? / 1000.0)
            and (ended_at is not null or expires_at < to_timestamp(? / 1000.0))`,
        [limit.name, now - span, now],
      );
      return { decision, admissionId: id };
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

  private async release(
    sql: { run(text: string, params: unknown[]): Promise<number> },
    t: string,
    limit: ProviderLimit,
    call: AdmissionRequest,
    decision: AdmissionDecision,
  ): Promise<AdmissionDecision> {
    // Its place in the window is given back: it asks anew when a call at once has ended.
    await sql.run(`delete from ${t} where limit_name = ? and call_id = ?`, [limit.name, call.callId]);
    return decision;
  }
}
