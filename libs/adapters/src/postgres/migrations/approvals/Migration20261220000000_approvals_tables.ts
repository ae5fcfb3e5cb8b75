import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The approvals service's own tables (architecture §7):
 * - `approvals`: one row per approval (a tool call waiting for a human, or an uncertain effect waiting for
 *   one), keyed by tenant and the id the orchestrator derived, so a re-sent request never opens a second;
 * - `decisions`: at most one per approval (the primary key is the guarantee: deciding twice, or racing the
 *   expiry sweeper, records one decision);
 * - `audit`: append-only, every request, decision, refusal, expiry and use — who, when, which digest.
 */
export class Migration20261220000000_approvals_tables extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.approvals (
      tenant_id text not null,
      id text not null,
      kind text not null check (kind in ('tool', 'escalation')),
      status text not null default 'pending' check (status in ('pending', 'granted', 'rejected', 'expired', 'resolved')),
      thread_id text not null,
      run_id text not null,
      step int not null,
      call_id text not null,
      agent text not null,
      tool text not null,
      args jsonb not null,
      args_digest text not null,
      role text not null,
      four_eyes boolean not null default false,
      requested_by text not null,
      requested_by_roles text[] not null default '{}',
      idempotency_key text null,
      reason text null,
      requested_at timestamptz not null default now(),
      expires_at timestamptz null,
      used_by text null,
      used_at timestamptz null,
      primary key (tenant_id, id)
    )`);
    this.addSql(
      `create index approvals_pending_idx on ${s}.approvals (tenant_id, requested_at) where status = 'pending'`,
    );
    this.addSql(
      `create index approvals_expiry_idx on ${s}.approvals (expires_at) where status = 'pending' and expires_at is not null`,
    );
    this.addSql(`create table ${s}.decisions (
      tenant_id text not null,
      approval_id text not null,
      decision text not null check (decision in ('granted', 'rejected', 'expired', 'happened', 'retry', 'fail')),
      decided_by text not null,
      reason text not null default '',
      result jsonb null,
      decided_at timestamptz not null default now(),
      primary key (tenant_id, approval_id),
      foreign key (tenant_id, approval_id) references ${s}.approvals (tenant_id, id)
    )`);
    this.addSql(`create table ${s}.audit (
      id bigserial primary key,
      tenant_id text not null,
      approval_id text not null,
      action text not null,
      actor text not null,
      args_digest text not null,
      detail jsonb not null default '{}',
      at timestamptz not null default clock_timestamp()
    )`);
    this.addSql(`create index audit_approval_idx on ${s}.audit (tenant_id, approval_id, id)`);
  }
}
