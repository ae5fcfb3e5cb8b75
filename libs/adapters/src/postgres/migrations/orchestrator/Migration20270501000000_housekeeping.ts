import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The deployment's built-in housekeeping (docs/runbooks/retention.md), one schedule for all
 * orchestrators:
 * - `housekeeping`: one row per job with its cursor: every tick at or before `decided_through` is done.
 *   An orchestrator runs a tick while holding this row (`for update skip locked`), and moves the cursor
 *   in the same commit that records the tick, so a tick is done by one of them and recorded once.
 * - `housekeeping_ticks`: each tick done, by whom, and what it removed.
 */
export class Migration20270501000000_orchestrator_housekeeping extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.housekeeping (
      job text primary key,
      decided_through timestamptz not null,
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create table ${s}.housekeeping_ticks (
      job text not null,
      tick_at timestamptz not null,
      missed int not null default 0,
      started_at timestamptz not null,
      finished_at timestamptz not null,
      decided_by text not null,
      report jsonb not null,
      primary key (job, tick_at)
    )`);
  }
}
