import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A tenant's own throttle for an agent's runs (docs/flow-control.md#throttle): its limit and period in place
 * of the agent's; with both, a throttle on an agent that declares none. Null: the agent's.
 */
export class Migration20271201000007_orchestrator_tenant_throttle extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(
      `alter table ${s}.tenant_agent_settings
         add column throttle_limit integer null check (throttle_limit between 1 and 1000000),
         add column throttle_period_seconds integer null check (throttle_period_seconds between 1 and 86400)`,
    );
  }
}
