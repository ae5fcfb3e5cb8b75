import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Webhook secret rotation (docs/webhooks.md): after a rotation the previous secret still signs
 * deliveries, next to the new one, until `previous_until`.
 */
export class Migration20270501000001_orchestrator_webhook_secret_rotation extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.webhook_secrets
      add column previous_secret text null,
      add column previous_until timestamptz null,
      add column rotated_at timestamptz null`);
  }
}
