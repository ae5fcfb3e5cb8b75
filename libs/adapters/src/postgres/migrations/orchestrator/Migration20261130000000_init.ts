import { Migration } from '@mikro-orm/migrations';
import { genericTablesSql, migrationSchema } from '../generic-tables';

export class Migration20261130000000_orchestrator_init extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    for (const sql of genericTablesSql(s)) this.addSql(sql);
    // The log of record. (tenant, thread, version) is the optimistic-concurrency check; `position`
    // gives the event feed one global order to resume from.
    this.addSql(`create table ${s}.thread_events (
      tenant_id text not null,
      thread_id text not null,
      version int not null,
      id text not null unique,
      type text not null,
      v int not null,
      run_id text null,
      at timestamptz not null,
      causation_id text not null,
      correlation_id text not null,
      trace jsonb null,
      data jsonb not null,
      position bigserial not null,
      primary key (tenant_id, thread_id, version)
    )`);
    this.addSql(`create index thread_events_position_idx on ${s}.thread_events (position)`);
    this.addSql(`create table ${s}.threads (
      tenant_id text not null,
      thread_id text not null,
      version int not null,
      status text not null,
      agent text null,
      active_run_id text null,
      state jsonb not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, thread_id)
    )`);
    this.addSql(`create table ${s}.runs (
      tenant_id text not null,
      run_id text not null,
      thread_id text not null,
      request_id text not null,
      agent text not null,
      agent_version int not null,
      principal_id text not null,
      status text not null,
      steps int not null default 0,
      started_at timestamptz null,
      ended_at timestamptz null,
      version int not null,
      primary key (tenant_id, run_id),
      unique (tenant_id, request_id)
    )`);
    this.addSql(`create index runs_thread_idx on ${s}.runs (tenant_id, thread_id)`);
    this.addSql(`create table ${s}.agent_definitions (
      name text not null,
      version int not null,
      definition jsonb not null,
      digest text not null,
      created_at timestamptz not null default now(),
      primary key (name, version)
    )`);
  }
}
