import { reserveUnderCaps, type CapDecision, type TenantCaps } from '@ratchet/domain';
import type { Database } from './orm';
import { inTransaction, isoColumn, type SqlExecutor } from './sql';

/** A tenant's caps as set, with who set them and when. */
export interface TenantCapsRow extends TenantCaps {
  tenantId: string;
  setAt: string;
  setBy: string;
}

/** A change to a tenant's caps: a number sets one, null removes it, undefined leaves it. */
export interface TenantCapsChange {
  dayTokens?: number | null | undefined;
  monthTokens?: number | null | undefined;
}

interface CapsDbRow {
  tenant_id: string;
  day_tokens: string | null;
  month_tokens: string | null;
  set_at: string;
  set_by: string;
}

const COLUMNS = `tenant_id, day_tokens, month_tokens, ${isoColumn('set_at')}, set_by`;

function capsOf(r: CapsDbRow): TenantCapsRow {
  return {
    tenantId: r.tenant_id,
    ...(r.day_tokens !== null ? { dayTokens: Number(r.day_tokens) } : {}),
    ...(r.month_tokens !== null ? { monthTokens: Number(r.month_tokens) } : {}),
    setAt: r.set_at,
    setBy: r.set_by,
  };
}

/**
 * Tenants' token caps (`orchestrator.tenant_caps`), set by an operator (docs/flow-control.md "Token
 * caps"). A tenant that gets its first cap has its counts taken afresh from its recorded usage (what was
 * counted while it had none is not kept up to date); one left with none has its counts removed.
 */
export class TenantCapsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  async of(tenantId: string): Promise<TenantCapsRow | undefined> {
    const [row] = await this.sql.query<CapsDbRow>(
      `select ${COLUMNS} from ${this.sql.table('tenant_caps')} where tenant_id = ?`,
      [tenantId],
    );
    return row && capsOf(row);
  }

  async list(): Promise<TenantCapsRow[]> {
    const rows = await this.sql.query<CapsDbRow>(
      `select ${COLUMNS} from ${this.sql.table('tenant_caps')} order by tenant_id`,
    );
    return rows.map(capsOf);
  }

  /**
   * Applies `change` under the tenant's caps lock (no reservation is decided meanwhile); answers the caps
   * after it (undefined: the tenant has none left).
   */
  change(
    db: Database,
    tenantId: string,
    change: TenantCapsChange,
    by: string,
    at: Date,
  ): Promise<TenantCapsRow | undefined> {
    const caps = db.sql.table('tenant_caps');
    const counters = db.sql.table('tenant_usage_counters');
    return inTransaction(db.orm, db.schema, async (sql) => {
      const [before] = await sql.query<CapsDbRow>(
        `select ${COLUMNS} from (select pg_advisory_xact_lock(hashtextextended(?, 0))) l
           left join ${caps} on tenant_id = ?`,
        [`ratchet.caps:${tenantId}`, tenantId],
      );
      const was: TenantCaps = before?.tenant_id ? capsOf(before) : {};
      const next = {
        dayTokens: change.dayTokens === undefined ? was.dayTokens : (change.dayTokens ?? undefined),
        monthTokens: change.monthTokens === undefined ? was.monthTokens : (change.monthTokens ?? undefined),
      };
      const none = next.dayTokens === undefined && next.monthTokens === undefined;
      // A first cap counts from the recorded usage; with no cap left there are no counts to keep up.
      if (none || (was.dayTokens === undefined && was.monthTokens === undefined))
        await sql.query(`delete from ${counters} where tenant_id = ?`, [tenantId]);
      if (none) {
        await sql.queryAndCommit(`delete from ${caps} where tenant_id = ?`, [tenantId]);
        return undefined;
      }
      const [row] = await sql.queryAndCommit<CapsDbRow>(
        `insert into ${caps} (tenant_id, day_tokens, month_tokens, set_at, set_by) values (?, ?, ?, ?::timestamptz, ?)
         on conflict (tenant_id) do update set day_tokens = excluded.day_tokens, month_tokens = excluded.month_tokens,
           set_at = excluded.set_at, set_by = excluded.set_by
         returning ${COLUMNS}`,
        [tenantId, next.dayTokens ?? null, next.monthTokens ?? null, at.toISOString(), by],
      );
      return capsOf(row!);
    });
  }
}

/** A call's reservation under its tenant's caps: what to settle, and in which periods. */
export interface CapReservation {
  tenantId: string;
  /** The periods it was counted in (`d2026-12-07`, `m2026-12`). */
  periods: [string, string];
  tokens: number;
}

/** What a call asking its tenant's caps gets: go (with its reservation) or not, and why. */
export type CapAnswer =
  | { decision: Extract<CapDecision, { go: true }>; reservation: CapReservation }
  | { decision: Extract<CapDecision, { go: false }> };

/**
 * The counts against tenants' caps (`orchestrator.tenant_usage_counters`), shared by every orchestrator:
 * one tenant's reservations are decided one at a time, under an advisory lock per tenant, against the
 * current UTC day's and month's counts on the database's clock (seeded from the tenant's recorded usage
 * the first time a period is counted).
 */
export class TenantCapCounters {
  constructor(private readonly db: Database) {}

  reserve(tenantId: string, caps: TenantCaps, needs: number): Promise<CapAnswer> {
    const counters = this.db.sql.table('tenant_usage_counters');
    const usage = this.db.sql.table('model_usage');
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      await sql.query('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`ratchet.caps:${tenantId}`]);
      const seededUsage = (start: string) =>
        `(select coalesce(sum(u.input_tokens + u.output_tokens), 0) from ${usage} u
           where u.tenant_id = ? and u.state = 'responded' and u.at >= ${start})`;
      const [now] = await sql.query<{ day: string; month: string; day_tokens: string; month_tokens: string }>(
        `with p as (
           select 'd' || to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as day,
                  'm' || to_char(now() at time zone 'UTC', 'YYYY-MM') as month,
                  date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' as day_start,
                  date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' as month_start),
         existing as (select c.period, c.tokens from ${counters} c, p
                       where c.tenant_id = ? and c.period in (p.day, p.month)),
         seeded as (
           insert into ${counters} (tenant_id, period, tokens)
           select ?, p.day, ${seededUsage('p.day_start')} from p
            where not exists (select 1 from existing e where e.period = p.day)
           union all
           select ?, p.month, ${seededUsage('p.month_start')} from p
            where not exists (select 1 from existing e where e.period = p.month)
           returning period, tokens)
         select p.day, p.month,
                coalesce((select tokens from existing where period = p.day),
                         (select tokens from seeded where period = p.day)) as day_tokens,
                coalesce((select tokens from existing where period = p.month),
                         (select tokens from seeded where period = p.month)) as month_tokens
           from p`,
        [tenantId, tenantId, tenantId, tenantId, tenantId],
      );
      const decision = reserveUnderCaps(
        caps,
        { day: Number(now!.day_tokens), month: Number(now!.month_tokens) },
        needs,
      );
      if (!decision.go) {
        await sql.queryAndCommit('select 1');
        return { decision };
      }
      const periods: [string, string] = [now!.day, now!.month];
      await sql.queryAndCommit(`update ${counters} set tokens = tokens + ? where tenant_id = ? and period in (?)`, [
        needs,
        tenantId,
        periods,
      ]);
      return { decision, reservation: { tenantId, periods, tokens: needs } };
    });
  }

  /**
   * Replaces a reservation's count with what the call used (the provider's report; 0: it was not made or
   * not billed). One statement, without the tenant's lock: it only moves the count to the truth.
   */
  async settle(reservation: CapReservation, used: number): Promise<void> {
    if (used === reservation.tokens) return;
    await this.db.sql.query(
      `update ${this.db.sql.table('tenant_usage_counters')} set tokens = tokens + ? where tenant_id = ? and period in (?)`,
      [used - reservation.tokens, reservation.tenantId, reservation.periods],
    );
  }

  /** The tenant's counts in the current UTC day and month (0 where nothing was counted yet). */
  async counts(tenantId: string): Promise<{ day: number; month: number }> {
    const [row] = await this.db.sql.query<{ day: string | null; month: string | null }>(
      `select (select tokens from ${this.db.sql.table('tenant_usage_counters')}
                where tenant_id = ? and period = 'd' || to_char(now() at time zone 'UTC', 'YYYY-MM-DD')) as day,
              (select tokens from ${this.db.sql.table('tenant_usage_counters')}
                where tenant_id = ? and period = 'm' || to_char(now() at time zone 'UTC', 'YYYY-MM')) as month`,
      [tenantId, tenantId],
    );
    return { day: Number(row?.day ?? 0), month: Number(row?.month ?? 0) };
  }
}
