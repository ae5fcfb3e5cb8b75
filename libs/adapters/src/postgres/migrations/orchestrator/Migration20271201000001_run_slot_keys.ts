import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The concurrency keys a run holds while in flight (`customer=42`, from its agent's `slots`, ADR 0045), and
 * a GIN index of them over the runs in flight only: a run request holding a key counts the tenant's runs
 * in flight with that key (up to its max) through it. Runs without keys are not in the index.
 * `waiting_for`: what a run held for admission waits for, in words (its status shows it).
 * `slot_turns`: when the admission pass last started a held run of a key, so keys with as many runs going
 * take turns (the one served longest ago first) across every orchestrator. Advice only: a row lost or
 * stale changes an order, never a count; rows of keys not served for a day are removed by the pass.
 */
export class Migration20271201000001_orchestrator_run_slot_keys extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.runs add column slot_keys text[] null, add column waiting_for text null`);
    this.addSql(
      `create index runs_slot_keys_idx on ${s}.runs using gin (slot_keys) where status in ('queued', 'running') and waiting_on is null and slot_keys is not null`,
    );
    this.addSql(`create table ${s}.slot_turns (
      tenant_id text not null,
      slot_key text not null,
      served_at timestamptz not null,
      primary key (tenant_id, slot_key)
    )`);
  }
}
