import { reserveUnderCaps, type CapCounts, type CapDecision, type CapNeeds, type TenantCaps } from '@ratchet/domain';
import type { Database } from './orm';
import { inTransaction, isoColumn, type SqlExecutor } from './sql';

/** A tenant's caps as set, with who set them and when. */
export interface TenantCapsRow extends TenantCaps {
  tenantId: string;
  setAt: string;
  setBy: string;
}

/** A change to a tenant's caps: a number sets one, null removes it, undefined leaves it. Costs in millionths. */
export type TenantCapsChange = { [K in keyof TenantCaps]?: number | null | undefined };

interface CapsDbRow {
  tenant_id: string;
  day_tokens: string | null;
  month_tokens: string | null;
  day_cost_micros: string | null;
  month_cost_micros: string | null;
  set_at: string;
  set_by: string;
}

const COLUMNS = `tenant_id, day_tokens, month_tokens, day_cost_micros, month_cost_micros, ${isoColumn('set_at')}, set_by`;

/** Each cap and its column. */
const CAP_COLUMNS = {
  dayTokens: 'day_tokens',
  monthTokens: 'month_tokens',
  dayCost: 'day_cost_micros',
  monthCost: 'month_cost_micros',
} as const satisfies Record<keyof TenantCaps, keyof CapsDbRow>;
const CAPS = Object.keys(CAP_COLUMNS) as (keyof TenantCaps)[];

function capsOf(r: CapsDbRow): TenantCapsRow {
  const caps: TenantCaps = {};
  for (const cap of CAPS) {
    const v = r[CAP_COLUMNS[cap]];
    if (v !== null) caps[cap] = Number(v);
  }
  return { tenantId: r.tenant_id, ...caps, setAt: r.set_at, setBy: r.set_by };
}

/**
 * Tenants' token and cost caps (`orchestrator.tenant_caps`), set by an operator (docs/flow-control.md
 * "Token and cost caps"). A tenant that gets its first cap has its counts taken afresh from its recorded
 * usage (what was counted while it had none is not kept up to date); one left with none has its counts
 * removed.
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
      const next: TenantCaps = {};
      for (const cap of CAPS) {
        const v = change[cap] === undefined ? was[cap] : (change[cap] ?? undefined);
        if (v !== undefined) next[cap] = v;
      }
      const none = CAPS.every((c) => next[c] === undefined);
      // A first cap counts from the recorded usage; with no cap left there are no counts to keep up.
      if (none || CAPS.every((c) => was[c] === undefined))
        await sql.query(`delete from ${counters} where tenant_id = ?`, [tenantId]);
      if (none) {
        await sql.queryAndCommit(`delete from ${caps} where tenant_id = ?`, [tenantId]);
        return undefined;
      }
      const [row] = await sql.queryAndCommit<CapsDbRow>(
        `insert into ${caps} (tenant_id, day_tokens, month_tokens, day_cost_micros, month_cost_micros, set_at, set_by)
         values (?, ?, ?, ?, ?, ?::timestamptz, ?)
         on conflict (tenant_id) do update set day_tokens = excluded.day_tokens, month_tokens = excluded.month_tokens,
           day_cost_micros = excluded.day_cost_micros, month_cost_micros = excluded.month_cost_micros,
           set_at = excluded.set_at, set_by = excluded.set_by
         returning ${COLUMNS}`,
        [tenantId, ...CAPS.map((c) => next[c] ?? null), at.toISOString(), by],
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
  /** Its cost as reserved, in millionths (0: its model has no price). */
  cost: number;
}

/** What a call asking its tenant's caps gets: go (with its reservation) or not, and why. */
export type CapAnswer =
  | { decision: Extract<CapDecision, { go: true }>; reservation: CapReservation }
  | { decision: Extract<CapDecision, { go: false }> };

interface CountsRow {
  day: string;
  month: string;
  day_tokens: string;
  month_tokens: string;
  day_cost: string;
  month_cost: string;
}

/**
 * The counts against tenants' caps (`orchestrator.tenant_usage_counters`: tokens and cost per tenant and
 * period), shared by every orchestrator: one tenant's reservations are decided one at a time, under an
 * advisory lock per tenant, against the current UTC day's and month's counts on the database's clock
 * (seeded from the tenant's recorded usage the first time a period is counted).
 */
export class TenantCapCounters {
  constructor(private readonly db: Database) {}

  reserve(tenantId: string, caps: TenantCaps, needs: CapNeeds): Promise<CapAnswer> {
    const counters = this.db.sql.table('tenant_usage_counters');
    const usage = this.db.sql.table('model_usage');
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      await sql.query('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`ratchet.caps:${tenantId}`]);
      const seeded = (start: string) =>
        `(select coalesce(sum(u.input_tokens + u.output_tokens), 0) as tokens, coalesce(sum(u.cost_micros), 0) as cost
            from ${usage} u where u.tenant_id = ? and u.state = 'responded' and u.at >= ${start})`;
      const [now] = await sql.query<CountsRow>(
        `with p as (
           select 'd' || to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as day,
                  'm' || to_char(now() at time zone 'UTC', 'YYYY-MM') as month,
                  date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' as day_start,
                  date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' as month_start),
         existing as (select c.period, c.tokens, c.cost_micros from ${counters} c, p
                       where c.tenant_id = ? and c.period in (p.day, p.month)),
         seeded as (
           insert into ${counters} (tenant_id, period, tokens, cost_micros)
           select ?, p.day, s.tokens, s.cost from p, lateral ${seeded('p.day_start')} s
            where not exists (select 1 from existing e where e.period = p.day)
           union all
           select ?, p.month, s.tokens, s.cost from p, lateral ${seeded('p.month_start')} s
            where not exists (select 1 from existing e where e.period = p.month)
           returning period, tokens, cost_micros),
         counted as (select * from existing union all select * from seeded)
         select p.day, p.month,
                (select tokens from counted where period = p.day) as day_tokens,
                (select tokens from counted where period = p.month) as month_tokens,
                (select cost_micros from counted where period = p.day) as day_cost,
                (select cost_micros from counted where period = p.month) as month_cost
           from p`,
        [tenantId, tenantId, tenantId, tenantId, tenantId],
      );
      const counts: CapCounts = {
        day: Number(now!.day_tokens),
        month: Number(now!.month_tokens),
        dayCost: Number(now!.day_cost),
        monthCost: Number(now!.month_cost),
      };
      const decision = reserveUnderCaps(caps, counts, needs);
      if (!decision.go) {
        await sql.queryAndCommit('select 1');
        return { decision };
      }
      const periods: [string, string] = [now!.day, now!.month];
      const cost = needs.cost ?? 0;
      await sql.queryAndCommit(
        `update ${counters} set tokens = tokens + ?, cost_micros = cost_micros + ? where tenant_id = ? and period in (?)`,
        [needs.tokens, cost, tenantId, periods],
      );
      return { decision, reservation: { tenantId, periods, tokens: needs.tokens, cost } };
    });
  }

  /**
   * Replaces a reservation's count with what the call used (the provider's report; 0: it was not made or
   * not billed). One statement, without the tenant's lock: it only moves the count to the truth.
   */
  async settle(reservation: CapReservation, used: { tokens: number; cost: number }): Promise<void> {
    if (used.tokens === reservation.tokens && used.cost === reservation.cost) return;
    await this.db.sql.query(
      `update ${this.db.sql.table('tenant_usage_counters')} set tokens = tokens + ?, cost_micros = cost_micros + ?
        where tenant_id = ? and period in (?)`,
      [used.tokens - reservation.tokens, used.cost - reservation.cost, reservation.tenantId, reservation.periods],
    );
  }

  /** The tenant's counts in the current UTC day and month (0 where nothing was counted yet). */
  async counts(tenantId: string): Promise<CapCounts> {
    const t = this.db.sql.table('tenant_usage_counters');
    const [row] = await this.db.sql.query<Record<'day' | 'month' | 'day_cost' | 'month_cost', string | null>>(
      `with p as (select 'd' || to_char(now() at time zone 'UTC', 'YYYY-MM-DD') as day,
                         'm' || to_char(now() at time zone 'UTC', 'YYYY-MM') as month)
       select (select tokens from ${t}, p where tenant_id = ? and period = p.day) as day,
              (select tokens from ${t}, p where tenant_id = ? and period = p.month) as month,
              (select cost_micros from ${t}, p where tenant_id = ? and period = p.day) as day_cost,
              (select cost_micros from ${t}, p where tenant_id = ? and period = p.month) as month_cost`,
      [tenantId, tenantId, tenantId, tenantId],
    );
    return {
      day: Number(row?.day ?? 0),
      month: Number(row?.month ?? 0),
      dayCost: Number(row?.day_cost ?? 0),
      monthCost: Number(row?.month_cost ?? 0),
    };
  }
}
