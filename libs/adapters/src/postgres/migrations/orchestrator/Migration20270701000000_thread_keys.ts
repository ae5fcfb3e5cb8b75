import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The threads' data keys (ADR 0034, docs/security.md#content-at-rest): one live key per thread, wrapped by
 * the master key (which is never in the database). Destroying a key (erasure) keeps its row as a
 * tombstone without the key, so a reader can tell "erased" from "unknown here".
 */
export class Migration20270701000000_orchestrator_thread_keys extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.thread_keys (
      kid text primary key,
      tenant_id text not null,
      thread_id text not null,
      subject text not null,
      wrapped text,
      created_at timestamptz not null default now(),
      destroyed_at timestamptz,
      check ((wrapped is null) = (destroyed_at is not null))
    )`);
    this.addSql(
      `create unique index thread_keys_live_idx on ${s}.thread_keys (tenant_id, thread_id) where destroyed_at is null`,
    );
    this.addSql(`create index thread_keys_subject_idx on ${s}.thread_keys (tenant_id, subject)`);
  }
}
