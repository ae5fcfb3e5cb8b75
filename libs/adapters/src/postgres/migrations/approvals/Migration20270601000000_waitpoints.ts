import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Waitpoints (ADR 0041) are approvals of kind `waitpoint`: decided by their completion (`completed` with
 * a result, `failed` with the error the outside world reports), their TTL (`expired`) or their run's
 * stop (`cancelled`). A waitpoint keeps what its expiry does (`on_expiry`) and the JSON Schema its result
 * must fit (`result_schema`, null: any JSON).
 */
export class Migration20270601000000_approvals_waitpoints extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.approvals drop constraint approvals_kind_check`);
    this.addSql(
      `alter table ${s}.approvals add constraint approvals_kind_check check (kind in ('tool', 'escalation', 'waitpoint'))`,
    );
    this.addSql(`alter table ${s}.approvals drop constraint approvals_status_check`);
    this.addSql(
      `alter table ${s}.approvals add constraint approvals_status_check check (status in ('pending', 'granted', 'rejected', 'expired', 'resolved', 'cancelled', 'completed', 'failed'))`,
    );
    this.addSql(`alter table ${s}.decisions drop constraint decisions_decision_check`);
    this.addSql(
      `alter table ${s}.decisions add constraint decisions_decision_check check (decision in ('granted', 'rejected', 'expired', 'happened', 'retry', 'fail', 'cancelled', 'completed', 'failed'))`,
    );
    this.addSql(
      `alter table ${s}.approvals add column on_expiry text null check (on_expiry in ('tool_error', 'fail_run')), add column result_schema jsonb null`,
    );
  }
}
