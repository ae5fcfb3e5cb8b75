import type { SqlExecutor } from '../postgres/sql';

/** One tenant's max for one slot of one agent, in place of the max the agent declares (ADR 0045). */
export interface TenantSlotLimit {
  tenant: string;
  agent: string;
  slot: string;
  max: number;
  setAt: string;
  /** Who set it (the operator's name for it, e.g. `cli:alice`). */
  setBy: string;
}

/**
 * The tenant settings of concurrency keys, in `orchestrator.tenant_slot_limits` (primary key tenant,
 * agent, slot): a deployment operator gives one tenant another max for a slot of an agent — a shared
 * agent's, or the tenant's own. A run request reads its tenant's settings for its agent; the run keeps
 * the max it was requested with, so a change applies to the runs requested after it.
 */
export class TenantSlotLimitsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** The tenant's max per slot name of `agent` (slots without a setting are absent). */
  async maxes(tenant: string, agent: string): Promise<Readonly<Record<string, number>>> {
    const rows = await this.sql.query<{ slot: string; max: number }>(
      `select slot, max from ${this.sql.table('tenant_slot_limits')} where tenant_id = ? and agent = ?`,
      [tenant, agent],
    );
    return Object.fromEntries(rows.map((r) => [r.slot, r.max]));
  }

  /** Sets (or replaces) a tenant's max for a slot; `at` and `by` are kept with it. */
  async set(limit: Omit<TenantSlotLimit, 'setAt'>, at: Date): Promise<void> {
    await this.sql.run(
      `insert into ${this.sql.table('tenant_slot_limits')} (tenant_id, agent, slot, max, set_at, set_by)
       values (?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, agent, slot) do update set max = excluded.max, set_at = excluded.set_at, set_by = excluded.set_by`,
      [limit.tenant, limit.agent, limit.slot, limit.max, at.toISOString(), limit.setBy],
    );
  }

  /** Removes a tenant's setting (the agent's own max applies again); false when there was none. */
  async unset(tenant: string, agent: string, slot: string): Promise<boolean> {
    const removed = await this.sql.run(
      `delete from ${this.sql.table('tenant_slot_limits')} where tenant_id = ? and agent = ? and slot = ?`,
      [tenant, agent, slot],
    );
    return removed > 0;
  }

  /** Every setting, or one tenant's, ordered by tenant, agent and slot. */
  async list(tenant?: string): Promise<TenantSlotLimit[]> {
    const rows = await this.sql.query<{
      tenant_id: string;
      agent: string;
      slot: string;
      max: number;
      set_at: Date | string;
      set_by: string;
    }>(
      `select tenant_id, agent, slot, max, set_at, set_by from ${this.sql.table('tenant_slot_limits')}
        ${tenant === undefined ? '' : 'where tenant_id = ?'} order by tenant_id, agent, slot`,
      tenant === undefined ? [] : [tenant],
    );
    return rows.map((r) => ({
      tenant: r.tenant_id,
      agent: r.agent,
      slot: r.slot,
      max: r.max,
      setAt: new Date(r.set_at).toISOString(),
      setBy: r.set_by,
    }));
  }
}
