import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A tenant's settings for one agent's runs, in place of what the agent declares (docs/flow-control.md):
 * the queued TTL and the default priority; null: the agent's. Set by a deployment operator (`ratchet
 * agents settings set`), read when a run is requested and fixed on the run.
 */
export class Migration20271201000005_orchestrator_tenant_agent_settings extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.tenant_agent_settings (
      tenant_id text not null,
      agent text not null,
      queue_ttl_seconds integer null check (queue_ttl_seconds between 1 and 2592000),
      priority integer null check (priority between -600 and 600),
      set_at timestamptz not null,
      set_by text not null,
      primary key (tenant_id, agent)
    )`);
  }
}
