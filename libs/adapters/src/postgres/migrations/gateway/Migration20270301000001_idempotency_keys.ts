import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * `idempotency_keys`: every `Idempotency-Key` a tenant sent with `POST /v1/runs`, with the digest of what
 * it asked. Taken before the request is published, so a key used again with another body is refused at
 * once with 409 (however quickly the two requests follow each other), and a resend of the same body gets
 * the same ids.
 */
export class Migration20270301000001_gateway_idempotency_keys extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.idempotency_keys (
      tenant_id text not null,
      key text not null,
      request_digest text not null,
      run_id text not null,
      thread_id text not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, key)
    )`);
  }
}
