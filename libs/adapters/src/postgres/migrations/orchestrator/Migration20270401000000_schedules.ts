import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A tenant's schedules and the ticks decided for them (see docs/schedules.md):
 * - `schedules`: the definition (`spec`: timing, agent, input, thread, overlap, catch-up, end, webhook),
 *   who it runs as, and the ticker's cursor: every tick at or before `decided_through` was decided.
 *   `next_due_at` (null: paused or ended) is what the ticker claims on, `for update skip locked`.
 * - `schedule_ticks`: each tick decided, with what it did (started a run with `request_id`, or was
 *   skipped and why), written in the same transaction as the run request in the outbox.
 */
export class Migration20270401000000_orchestrator_schedules extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.schedules (
      tenant_id text not null,
      schedule_id text not null,
      spec jsonb not null,
      principal jsonb not null,
      paused boolean not null default false,
      anchor_at timestamptz not null,
      decided_through timestamptz not null,
      next_due_at timestamptz null,
      last_run_id text null,
      last_thread_id text null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, schedule_id)
    )`);
    this.addSql(`create index schedules_due_idx on ${s}.schedules (next_due_at) where next_due_at is not null`);
    this.addSql(`create table ${s}.schedule_ticks (
      tenant_id text not null,
      schedule_id text not null,
      tick_at timestamptz not null,
      action text not null,
      reason text null,
      request_id text null,
      decided_at timestamptz not null,
      decided_by text not null,
      primary key (tenant_id, schedule_id, tick_at)
    )`);
  }
}
