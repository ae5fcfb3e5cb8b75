import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A run's priority in the admission queue, in seconds (its request's or its agent's, ADR 0045): the
 * admission pass serves a held run as if it had been requested this much earlier. 0 for every run
 * requested before priorities.
 */
export class Migration20271201000004_orchestrator_run_priority extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.runs add column priority integer not null default 0`);
  }
}
