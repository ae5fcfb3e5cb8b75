import { Migration } from '@mikro-orm/migrations';
import { genericTablesSql, migrationSchema } from '../generic-tables';

export class Migration20261130000000_gateway_init extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    for (const sql of genericTablesSql(s)) this.addSql(sql);
    // Only the SHA-256 of a key is stored: a database leak does not leak credentials.
    this.addSql(`create table ${s}.api_keys (
      id text primary key,
      tenant_id text not null,
      name text not null,
      key_hash text not null unique,
      roles text[] not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz null,
      revoked_at timestamptz null
    )`);
    this.addSql(`create index api_keys_tenant_idx on ${s}.api_keys (tenant_id)`);
  }
}
