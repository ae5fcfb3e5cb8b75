import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The threads' data keys (ADR 0034, docs/security.md#content-at-rest): one live key per thread, wrapped by
 * the master key (which is never in the database). Erasing the thread deletes its key's row with its
 * other rows: nothing of the thread is kept, and its content anywhere else can no longer be opened.
 */
export class Migration20270701000000_orchestrator_thread_keys extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.thread_keys (
      kid text primary key,
      tenant_id text not null,
      thread_id text not null,
      subject text not null,
      wrapped text not null,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create unique index thread_keys_thread_idx on ${s}.thread_keys (tenant_id, thread_id)`);
    this.addSql(`create index thread_keys_subject_idx on ${s}.thread_keys (tenant_id, subject)`);
  }
}
