import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Retention and erasure (architecture §9):
 * - `thread_snapshots`: at most one per thread. A compacted thread's log starts after `version`: the
 *   events up to it were folded into `state` (the ThreadState at that version) and deleted. `run_versions`
 *   keeps, per run, the version of the last event that touched it, so the `runs` rows can still be rebuilt.
 * - `erasures`: the tombstone of an erasure request: which tenant, a hash of the subject (never the
 *   subject), what was removed (counts per table and stream), when and by which operator.
 */
export class Migration20261231000000_orchestrator_retention extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.thread_snapshots (
      tenant_id text not null,
      thread_id text not null,
      version int not null check (version >= 1),
      state jsonb not null,
      run_versions jsonb not null default '{}'::jsonb,
      events_removed int not null default 0,
      created_at timestamptz not null default now(),
      primary key (tenant_id, thread_id)
    )`);
    this.addSql(`create table ${s}.erasures (
      id bigserial primary key,
      tenant_id text not null,
      subject_hash text not null,
      counts jsonb not null,
      operator text not null,
      erased_at timestamptz not null default now()
    )`);
    this.addSql(`create index erasures_subject_idx on ${s}.erasures (tenant_id, subject_hash)`);
  }
}
