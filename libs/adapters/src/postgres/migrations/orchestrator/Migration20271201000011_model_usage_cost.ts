import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * What each recorded answer cost by the deployment's price table (`MODEL_PRICES`), in millionths of its
 * currency, as its `model.responded` usage says (null: the model had no price, or the row is not an answer).
 */
export class Migration20271201000011_orchestrator_model_usage_cost extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.model_usage add column cost_micros bigint null`);
  }
}
