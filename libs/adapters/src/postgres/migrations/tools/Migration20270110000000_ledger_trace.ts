import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The effect ledger keeps the W3C traceparent of the attempt that last claimed an effect (started or
 * retried it), so a later attempt's span can link to the one it replaces — even when that one's process
 * died before its span was exported. Null for rows written before this column existed.
 */
export class Migration20270110000000_tools_ledger_trace extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.effects add column traceparent text null`);
  }
}
