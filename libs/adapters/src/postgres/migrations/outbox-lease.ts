import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from './generic-tables';

/**
 * `outbox.available_at`: a row the committing process executes itself (a model call it runs in-process)
 * is leased to it until then; the sweeper leaves it alone while the lease runs and publishes it once the
 * lease has run out (the process died or stopped renewing). Null for every other row.
 */
abstract class OutboxLease extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.outbox add column available_at timestamptz null`);
  }
}

// One class per schema: each service's migration table records its own name.
export class Migration20270120000000_orchestrator_outbox_lease extends OutboxLease {}
export class Migration20270120000000_tools_outbox_lease extends OutboxLease {}
export class Migration20270120000000_gateway_outbox_lease extends OutboxLease {}
export class Migration20270120000000_approvals_outbox_lease extends OutboxLease {}
export class Migration20270120000000_memory_outbox_lease extends OutboxLease {}
