import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The debounce key a run was requested under (`indexer:documentId=42`, from its agent's `debounce`): of a
 * key's queued runs, only the one requested last may start. A debounced request or admission finds it under
 * the key's lock, and the admission pass finds the runs a later request superseded, through this index
 * (queued runs with a key, by request time). Null for runs without a debounce.
 */
export class Migration20271201000008_orchestrator_run_debounce_key extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.runs add column debounce_key text null`);
    this.addSql(
      `create index runs_debounce_idx on ${s}.runs (tenant_id, debounce_key, waiting_since) where status = 'queued' and debounce_key is not null`,
    );
  }
}
