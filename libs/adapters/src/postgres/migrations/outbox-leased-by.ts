import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from './generic-tables';

/**
 * `outbox.leased_by`: the process that holds a row's lease (`available_at`). The holder alone renews it;
 * a worker taking the command off the bus claims the row before it acts, so two workers never act on
 * one row at once. A row with `available_at` and no holder is delayed (a retry's backoff), not leased.
 */
abstract class OutboxLeasedBy extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.outbox add column leased_by text null`);
  }
}

// One class per schema: each service's migration table records its own name.
export class Migration20270301000000_orchestrator_outbox_leased_by extends OutboxLeasedBy {}
export class Migration20270301000000_tools_outbox_leased_by extends OutboxLeasedBy {}
export class Migration20270301000000_gateway_outbox_leased_by extends OutboxLeasedBy {}
export class Migration20270301000000_approvals_outbox_leased_by extends OutboxLeasedBy {}
export class Migration20270301000000_memory_outbox_leased_by extends OutboxLeasedBy {}
