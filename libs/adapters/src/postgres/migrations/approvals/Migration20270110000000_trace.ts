import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * An approval keeps the W3C traceparent its request arrived with (the run's trace), so the wait for a
 * human can be reported as a span of the run when it is decided or expires, and the decision message
 * continues the run's trace. Null for approvals requested before this column existed.
 */
export class Migration20270110000000_approvals_trace extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.approvals add column traceparent text null`);
  }
}
