import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * `idempotency_keys` holds the key of every route that creates or decides something, not only
 * `POST /v1/runs`: the operation it was used on, who sent it, the answer given (status and body), and
 * while the first request with it is still being answered, until when it is held (`locked_until`).
 * `thread_id` / `run_id` are what the answer named, so erasing a thread erases its keys; `principal_id`
 * is who sent it, so erasing a subject erases them too. `created_at` is what housekeeping prunes by.
 * Rows an older gateway writes during a rolling upgrade (no answer, no hold) are run requests whose
 * answer is derived again from the key.
 */
export class Migration20270901000000_gateway_idempotent_answers extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.idempotency_keys
      add column operation text not null default 'POST /v1/runs',
      add column principal_id text null,
      add column status integer null,
      add column response jsonb null,
      add column locked_until timestamptz null,
      alter column run_id drop not null,
      alter column thread_id drop not null`);
    this.addSql(`create index idempotency_keys_thread_idx on ${s}.idempotency_keys (tenant_id, thread_id)`);
    this.addSql(`create index idempotency_keys_principal_idx on ${s}.idempotency_keys (tenant_id, principal_id)`);
    this.addSql(`create index idempotency_keys_created_idx on ${s}.idempotency_keys (created_at)`);
  }
}
