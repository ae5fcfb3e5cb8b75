import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The runs held for admission (queued past the tenant's bound on runs in flight, ADR 0045), by tenant and
 * thread in the order they were held: the admission pass reads them every beat on every orchestrator, and
 * must not scan the runs table for them. Empty unless TENANT_RUNS_OVER_BOUND=queue.
 */
export class Migration20271201000000_orchestrator_runs_held extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(
      `create index runs_held_idx on ${s}.runs (tenant_id, thread_id, waiting_since, version) where status = 'queued' and waiting_on = 'admission'`,
    );
  }
}
