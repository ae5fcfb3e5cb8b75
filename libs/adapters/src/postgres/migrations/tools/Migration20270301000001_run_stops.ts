import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Cancellation that stops work, and attempts that do not overlap:
 * - `stopped_runs`: runs the orchestrator stopped (cancelled, interrupted, out of time), as its
 *   `run.stop` notices said. A call of such a run that has not started is never executed: its effect is
 *   recorded `cancelled`, with no effect, and the thread is told so.
 * - `effects.state` may be `cancelled`.
 * - `effects.leased_by` / `lease_until`: the executor acting on a `started` effect holds it and renews
 *   it while the tool runs. Another delivery of the same call meanwhile (a re-sent command) leaves it
 *   alone instead of retrying or escalating it; once the holder is gone (the lease ran out) the usual
 *   rules apply.
 */
export class Migration20270301000001_tools_run_stops extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.stopped_runs (
      tenant_id text not null,
      run_id text not null,
      thread_id text not null,
      reason text not null,
      stopped_at timestamptz not null default now(),
      primary key (tenant_id, run_id)
    )`);
    this.addSql(`alter table ${s}.effects drop constraint effects_state_check`);
    this.addSql(`alter table ${s}.effects add constraint effects_state_check
      check (state in ('started', 'succeeded', 'failed', 'uncertain', 'cancelled'))`);
    this.addSql(`alter table ${s}.effects add column leased_by text null, add column lease_until timestamptz null`);
  }
}
