import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * An approval whose run stopped (cancelled, interrupted, out of time) before anyone decided it is closed
 * as `cancelled`, with a `cancelled` decision by the system: it leaves the inbox, and deciding it
 * afterwards is refused (409) naming why.
 */
export class Migration20270501000000_approvals_cancelled extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.approvals drop constraint approvals_status_check`);
    this.addSql(
      `alter table ${s}.approvals add constraint approvals_status_check check (status in ('pending', 'granted', 'rejected', 'expired', 'resolved', 'cancelled'))`,
    );
    this.addSql(`alter table ${s}.decisions drop constraint decisions_decision_check`);
    this.addSql(
      `alter table ${s}.decisions add constraint decisions_decision_check check (decision in ('granted', 'rejected', 'expired', 'happened', 'retry', 'fail', 'cancelled'))`,
    );
    // Closing a run's approvals finds them by run.
    this.addSql(`create index approvals_pending_by_run on ${s}.approvals (tenant_id, run_id) where status = 'pending'`);
  }
}
