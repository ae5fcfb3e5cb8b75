import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * What a running run waits for (an approval, an operator), since when and until when, beside its status:
 * a waiting run keeps `running` (its thread is busy) but leaves the tenant's runs in flight and counts
 * toward its waiting runs instead (`TENANT_MAX_WAITING_RUNS`, docs/security.md). Each count reads a partial
 * index of its own rows, up to the bound, whatever the number of runs that ended.
 */
export class Migration20270801000000_orchestrator_waiting_runs extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(
      `alter table ${s}.runs add column waiting_on text, add column waiting_since timestamptz, add column waiting_until timestamptz`,
    );
    this.addSql(`drop index if exists ${s}.runs_in_flight_idx`);
    this.addSql(
      `create index runs_in_flight_idx on ${s}.runs (tenant_id) where status in ('queued', 'running') and waiting_on is null`,
    );
    this.addSql(
      `create index runs_waiting_idx on ${s}.runs (tenant_id) where status = 'running' and waiting_on is not null`,
    );
  }
}
