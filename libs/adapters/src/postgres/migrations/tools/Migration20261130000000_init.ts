import { Migration } from '@mikro-orm/migrations';
import { genericTablesSql, migrationSchema } from '../generic-tables';

export class Migration20261130000000_tools_init extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    for (const sql of genericTablesSql(s)) this.addSql(sql);
    // The effect ledger: one row per idempotency key, so a tool effect is never repeated by accident.
    this.addSql(`create table ${s}.effects (
      key text primary key,
      tenant_id text not null,
      thread_id text not null,
      run_id text not null,
      call_id text not null,
      tool text not null,
      kind text not null,
      state text not null check (state in ('started', 'succeeded', 'failed', 'uncertain')),
      attempts int not null default 1,
      result jsonb null,
      started_at timestamptz not null default now(),
      finished_at timestamptz null,
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create index effects_thread_idx on ${s}.effects (tenant_id, thread_id)`);
  }
}
