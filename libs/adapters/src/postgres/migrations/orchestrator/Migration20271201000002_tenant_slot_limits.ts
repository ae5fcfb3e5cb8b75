import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A tenant's settings for its agents' concurrency keys (ADR 0045): the max of one agent's slot for one
 * tenant, in place of the max the agent declares — set by a deployment operator (`ratchet agents limits
 * set`). Read when a run is requested; the run keeps the max it was requested with (`run.requested.slots`).
 * `set_by`: who set it, for the operator reading the table later.
 */
export class Migration20271201000002_orchestrator_tenant_slot_limits extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.tenant_slot_limits (
      tenant_id text not null,
      agent text not null,
      slot text not null,
      max integer not null check (max > 0),
      set_at timestamptz not null,
      set_by text not null,
      primary key (tenant_id, agent, slot)
    )`);
  }
}
