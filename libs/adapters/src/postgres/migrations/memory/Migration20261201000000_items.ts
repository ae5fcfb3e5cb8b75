import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Durable memory: items keyed by (tenant, namespace, key), full-text searchable, with an expiry the
 * sweeper acts on; and an erasure audit that records that a subject was forgotten, never who.
 */
export class Migration20261201000000_memory_items extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    // "C" collation: byte order for namespace/key, so prefix filters use the primary key and list
    // cursors page in the same order on every server, whatever its locale.
    this.addSql(`create table ${s}.items (
      tenant_id text not null,
      namespace text collate "C" not null,
      key text collate "C" not null,
      value jsonb not null,
      text text not null,
      search tsvector generated always as (to_tsvector('simple'::regconfig, text)) stored,
      owner text not null,
      subject text null,
      provenance jsonb not null default '{}'::jsonb,
      version int not null check (version >= 1),
      created_at timestamptz not null,
      updated_at timestamptz not null,
      expires_at timestamptz null,
      ttl_seconds int null check (ttl_seconds > 0),
      refresh_on_read boolean not null default false,
      primary key (tenant_id, namespace, key)
    )`);
    this.addSql(`create index items_search_idx on ${s}.items using gin (search)`);
    // The sweeper and forget-subject look only at these.
    this.addSql(`create index items_expires_idx on ${s}.items (expires_at) where expires_at is not null`);
    this.addSql(`create index items_owner_idx on ${s}.items (tenant_id, owner)`);
    this.addSql(`create index items_subject_idx on ${s}.items (tenant_id, subject) where subject is not null`);
    this.addSql(`create table ${s}.erasures (
      id bigserial primary key,
      tenant_id text not null,
      subject_hash text not null,
      erased_count int not null,
      erased_at timestamptz not null default now()
    )`);
    this.addSql(`create index erasures_tenant_idx on ${s}.erasures (tenant_id, erased_at)`);
  }
}
