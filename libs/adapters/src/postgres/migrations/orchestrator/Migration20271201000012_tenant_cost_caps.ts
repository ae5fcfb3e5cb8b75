import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A tenant's cost caps per UTC day and month (in millionths of the price table's currency; null: no cap),
 * beside its token caps, and the cost counted against them per period (docs/flow-control.md "Token and
 * cost caps", ADR 0046).
 */
export class Migration20271201000012_orchestrator_tenant_cost_caps extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.tenant_caps add column day_cost_micros bigint null`);
    this.addSql(`alter table ${s}.tenant_caps add column month_cost_micros bigint null`);
    this.addSql(`alter table ${s}.tenant_usage_counters add column cost_micros bigint not null default 0`);
  }
}
