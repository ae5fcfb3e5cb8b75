import type { SqlExecutor } from '../postgres/sql';

/** What a tenant's runs of an agent take in place of the agent's own (absent: the agent's). */
export interface AgentSettings {
  /** The queued TTL (seconds) of the tenant's runs of the agent. */
  queueTtlSeconds?: number;
  /** The default priority (seconds, -600 to 600) of the tenant's runs of the agent. */
  priority?: number;
  /** The throttle's limit: starts in any period (docs/flow-control.md#throttle). */
  throttleLimit?: number;
  /** The throttle's period, in seconds. */
  throttlePeriodSeconds?: number;
}

export interface TenantAgentSettings extends AgentSettings {
  tenant: string;
  agent: string;
  setAt: string;
  setBy: string;
}

/** A setting to change: a value sets it, `null` removes it (the agent's applies again), absent keeps it. */
export type AgentSettingsChange = { [K in keyof AgentSettings]?: number | null };

/** Each setting's column. */
const COLUMNS = {
  queueTtlSeconds: 'queue_ttl_seconds',
  priority: 'priority',
  throttleLimit: 'throttle_limit',
  throttlePeriodSeconds: 'throttle_period_seconds',
} as const satisfies Record<keyof AgentSettings, string>;
const SETTINGS = Object.keys(COLUMNS) as (keyof AgentSettings)[];
const SETTING_COLUMNS = SETTINGS.map((k) => COLUMNS[k]).join(', ');

type Row = { [K in keyof AgentSettings as (typeof COLUMNS)[K]]: number | null } & {
  tenant_id: string;
  agent: string;
  set_at: Date | string;
  set_by: string;
};

/**
 * A tenant's settings for one agent's runs (`orchestrator.tenant_agent_settings`, one row per tenant and
 * agent): set by a deployment operator, read when a run is requested. A row whose settings are all removed
 * is deleted.
 */
export class TenantAgentSettingsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  async of(tenant: string, agent: string): Promise<AgentSettings> {
    const [row] = await this.sql.query<Row>(
      `select ${SETTING_COLUMNS} from ${this.sql.table('tenant_agent_settings')} where tenant_id = ? and agent = ?`,
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
    // Per column: keep (absent), set (a number) or remove (null): `case when <keep> then s.x else excluded.x end`.
    const [row] = await this.sql.query<Row>(
      `insert into ${t} as s (tenant_id, agent, ${SETTING_COLUMNS}, set_at, set_by)
       values (?, ?, ${SETTINGS.map(() => '?').join(', ')}, ?, ?)
       on conflict (tenant_id, agent) do update set
         ${SETTINGS.map((k) => `${COLUMNS[k]} = case when ?::boolean then s.${COLUMNS[k]} else excluded.${COLUMNS[k]} end`).join(',\n         ')},
         set_at = excluded.set_at, set_by = excluded.set_by
       returning tenant_id, agent, ${SETTING_COLUMNS}, set_at, set_by`,
      [
        tenant,
        agent,
        ...SETTINGS.map((k) => change[k] ?? null),
        at.toISOString(),
        by,
        ...SETTINGS.map((k) => change[k] === undefined),
      ],
    );
    if (row && SETTINGS.every((k) => row[COLUMNS[k]] === null)) {
      await this.sql.run(
        `delete from ${t} where tenant_id = ? and agent = ? and ${SETTINGS.map((k) => `${COLUMNS[k]} is null`).join(' and ')}`,
        [tenant, agent],
      );
      return undefined;
    }
    return row && toView(row);
  }

  /** Every tenant's settings, or one tenant's, by tenant and agent. */
  async list(tenant?: string): Promise<TenantAgentSettings[]> {
    const rows = await this.sql.query<Row>(
      `select tenant_id, agent, ${SETTING_COLUMNS}, set_at, set_by from ${this.sql.table('tenant_agent_settings')}
        ${tenant === undefined ? '' : 'where tenant_id = ?'} order by tenant_id, agent`,
      tenant === undefined ? [] : [tenant],
    );
    return rows.map(toView);
  }
}

function settingsOf(row: Row): AgentSettings {
  const out: AgentSettings = {};
  for (const k of SETTINGS) {
    const v = row[COLUMNS[k]];
    if (v !== null) out[k] = v;
  }
  return out;
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
