import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A tenant's token caps (docs/flow-control.md "Token caps"), set by an operator: tokens per UTC day and
 * per UTC month (null: no cap). And what is counted against them, per tenant and period (`d2026-12-07`,
 * `m2026-12`): the tokens of every call reserved while the tenant has a cap — its reservation until it
 * ends, then what the provider reported — seeded, the first time a period is counted, from the tenant's
 * recorded usage of that period. A reservation and its settlement each change a period's row in one
 * statement, so one tenant's calls are decided one at a time against one number.
 */
export class Migration20271201000010_orchestrator_tenant_caps extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.tenant_caps (
      tenant_id text primary key,
      day_tokens bigint null,
      month_tokens bigint null,
      set_at timestamptz not null,
      set_by text not null)`);
    this.addSql(`create table ${s}.tenant_usage_counters (
      tenant_id text not null,
      period text not null,
      tokens bigint not null,
      primary key (tenant_id, period))`);
  }
}
