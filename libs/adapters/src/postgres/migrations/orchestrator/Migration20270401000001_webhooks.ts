import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Completion webhooks (docs/webhooks.md):
 * - `webhook_deliveries`: one row per run outcome to deliver (`delivery_id`, the receiver's dedup key),
 *   with its attempts; `pending` rows are claimed when `next_attempt_at` is due (`for update skip
 *   locked`), ending `delivered` or, after the last attempt, `dead` (listed by the API and the CLI).
 * - `webhook_secrets`: each tenant's signing secret, made on first use.
 */
export class Migration20270401000001_orchestrator_webhooks extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.webhook_deliveries (
      tenant_id text not null,
      delivery_id text not null,
      url text not null,
      body jsonb not null,
      status text not null default 'pending',
      attempts int not null default 0,
      next_attempt_at timestamptz not null,
      last_error text null,
      last_status int null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      delivered_at timestamptz null,
      primary key (tenant_id, delivery_id)
    )`);
    this.addSql(
      `create index webhook_deliveries_due_idx on ${s}.webhook_deliveries (next_attempt_at) where status = 'pending'`,
    );
    this.addSql(`create table ${s}.webhook_secrets (
      tenant_id text primary key,
      secret text not null,
      created_at timestamptz not null default now()
    )`);
  }
}
