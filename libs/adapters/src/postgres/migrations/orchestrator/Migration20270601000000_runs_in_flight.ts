import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The tenant's runs in flight, counted at each run request under a bound (`TENANT_MAX_ACTIVE_RUNS`,
 * docs/security.md): a partial index holds just the queued and running runs, so the count reads at most
 * the bound's number of index entries whatever the number of runs that ended.
 */
export class Migration20270601000000_orchestrator_runs_in_flight extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create index runs_in_flight_idx on ${s}.runs (tenant_id) where status in ('queued', 'running')`);
  }
}
