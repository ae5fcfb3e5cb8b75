import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * What the model calls of each tenant spent (docs/flow-control.md, "Usage"): one row per model call
 * whose answer the log recorded (`state` = `responded`, written in the same transaction as its
 * `model.responded` event, so the figures equal the log's), as figures without content. Nothing of a
 * thread's retention or erasure removes these rows: a tenant's spend outlives its threads. Reservations
 * for the tenant's token caps (`reserved`, `reserved_tokens`, `expires_at`) share the table, so a cap is
 * checked against one sum.
 */
export class Migration20271201000009_orchestrator_model_usage extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.model_usage (
      tenant_id text not null,
      id text not null,
      command_id text not null,
      thread_id text not null,
      run_id text not null,
      agent text not null,
      model text not null,
      at timestamptz not null,
      state text not null,
      input_tokens integer not null default 0,
      output_tokens integer not null default 0,
      reserved_tokens integer not null default 0,
      expires_at timestamptz null,
      primary key (tenant_id, id))`);
    this.addSql(`create index model_usage_at_idx on ${s}.model_usage (tenant_id, at)`);
  }
}
