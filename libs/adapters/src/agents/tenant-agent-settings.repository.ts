import type { SqlExecutor } from '../postgres/sql';

/** What a tenant's runs of an agent take in place of the agent's own (absent: the agent's). */
export interface AgentSettings {
  /** The queued TTL (seconds) of the tenant's runs of the agent. */
  queueTtlSeconds?: number;
  /** The default priority (seconds, -600 to 600) of the tenant's runs of the agent. */
  priority?: number;
}

export interface TenantAgentSettings extends AgentSettings {
  tenant: string;
  agent: string;
  setAt: string;
  setBy: string;
}

/** A setting to change: a value sets it, `null` removes it (the agent's applies again), absent keeps it. */
export type AgentSettingsChange = { [K in keyof AgentSettings]?: number | null };

interface Row {
  tenant_id: string;
  agent: string;
  queue_ttl_seconds: number | null;
  priority: number | null;
  set_at: Date | string;
  set_by: string;
}

/**
 * A tenant's settings for one agent's runs (`orchestrator.tenant_agent_settings`, one row per tenant and
 * agent): set by a deployment operator, read when a run is requested. A row whose settings are all removed
 * is deleted.
 */
export class TenantAgentSettingsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  async of(tenant: string, agent: string): Promise<AgentSettings> {
    const [row] = await this.sql.query<Pick<Row, 'queue_ttl_seconds' | 'priority'>>(
      `select queue_ttl_seconds, priority from ${this.sql.table('tenant_agent_settings')} where tenant_id = ? and agent = ?`,
      [tenant, agent],
    );
    return row ? settingsOf(row) : {};
  }

  /** Applies `change` (in one statement); the settings after it, or undefined when none is left. */
  async change(
    tenant: string,
    agent: string,
    change: AgentSettingsChange,
    by: string,
    at: Date,
  ): Promise<TenantAgentSettings | undefined> {
    const t = this.sql.table('tenant_agent_settings');
    // Per column: keep (absent), set (a number) or remove (null): `case when ? then excluded.x else t.x end`.
    const keepTtl = change.queueTtlSeconds === undefined;
    const keepPriority = change.priority === undefined;
    const [row] = await this.sql.query<Row>(
      `insert into ${t} as s (tenant_id, agent, queue_ttl_seconds, priority, set_at, set_by)
       values (?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, agent) do update set
         queue_ttl_seconds = case when ?::boolean then s.queue_ttl_seconds else excluded.queue_ttl_seconds end,
         priority = case when ?::boolean then s.priority else excluded.priority end,
         set_at = excluded.set_at, set_by = excluded.set_by
       returning tenant_id, agent, queue_ttl_seconds, priority, set_at, set_by`,
      [
        tenant,
        agent,
        change.queueTtlSeconds ?? null,
        change.priority ?? null,
        at.toISOString(),
        by,
        keepTtl,
        keepPriority,
      ],
    );
    if (row && row.queue_ttl_seconds === null && row.priority === null) {
      await this.sql.run(
        `delete from ${t} where tenant_id = ? and agent = ? and queue_ttl_seconds is null and priority is null`,
        [tenant, agent],
      );
      return undefined;
    }
    return row && toView(row);
  }

  /** Every tenant's settings, or one tenant's, by tenant and agent. */
  async list(tenant?: string): Promise<TenantAgentSettings[]> {
    const rows = await this.sql.query<Row>(
      `select tenant_id, agent, queue_ttl_seconds, priority, set_at, set_by from ${this.sql.table('tenant_agent_settings')}
        ${tenant === undefined ? '' : 'where tenant_id = ?'} order by tenant_id, agent`,
      tenant === undefined ? [] : [tenant],
    );
    return rows.map(toView);
  }
}

function settingsOf(row: Pick<Row, 'queue_ttl_seconds' | 'priority'>): AgentSettings {
  return {
    ...(row.queue_ttl_seconds !== null ? { queueTtlSeconds: row.queue_ttl_seconds } : {}),
    ...(row.priority !== null ? { priority: row.priority } : {}),
  };
}

function toView(row: Row): TenantAgentSettings {
  return {
    tenant: row.tenant_id,
    agent: row.agent,
    ...settingsOf(row),
    setAt: new Date(row.set_at).toISOString(),
    setBy: row.set_by,
  };
}
