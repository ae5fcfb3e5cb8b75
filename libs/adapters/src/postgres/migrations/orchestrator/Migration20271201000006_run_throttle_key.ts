import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The throttle a run starts under (`support:userId=42`, from its agent's `throttle`): a run request or an
 * admission of a throttled run counts, under the key's lock, the runs with its key that started within the
 * period, through this index (runs that have a throttle key and started). Kept after a run ends: its start
 * still counts in the window. Null for runs without a throttle.
 */
export class Migration20271201000006_orchestrator_run_throttle_key extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.runs add column throttle_key text null`);
    this.addSql(
      `create index runs_throttle_idx on ${s}.runs (tenant_id, throttle_key, started_at) where throttle_key is not null and started_at is not null`,
    );
  }
}
