import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * `jwt_revocations`: a tenant's deny list for JWT principals (ADR 0035). A row names a token subject
 * (`sub`) and, optionally, narrows it to one token (`jti`) and/or to tokens issued before a time;
 * a row with neither revokes every token of the subject. Ids and times come from the database.
 */
export class Migration20270601000000_gateway_jwt_revocations extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.jwt_revocations (
      id text primary key default gen_random_uuid()::text,
      tenant_id text not null,
      subject text not null,
      jti text null,
      issued_before timestamptz null,
      reason text not null default '',
      created_by text not null,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index jwt_revocations_subject_idx on ${s}.jwt_revocations (tenant_id, subject)`);
  }
}
