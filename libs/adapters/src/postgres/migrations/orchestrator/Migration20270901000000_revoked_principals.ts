import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A revocation reaches running work (docs/security.md#revocation): the orchestrator finds the revoked
 * principal's queued and running runs by a partial index of their own, and pauses the principal's
 * schedules with the reason (`paused_reason`, null for a pause someone asked for).
 */
export class Migration20270901000000_orchestrator_revoked_principals extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(
      `create index runs_principal_active_idx on ${s}.runs (tenant_id, principal_id) where status in ('queued', 'running')`,
    );
    this.addSql(`alter table ${s}.schedules add column paused_reason text null`);
    this.addSql(`create index schedules_principal_idx on ${s}.schedules (tenant_id, (principal->>'id'))`);
  }
}
