import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Provider limits shared by every orchestrator (docs/flow-control.md, ADR 0044): one row per model call
 * admitted under a limit — when its request goes out (`at`; later than now: a reservation), its tokens
 * (estimated, then as reported), when it went and ended (calls at once), and until when a call whose
 * worker died counts as in flight (`expires_at`).
 */
export class Migration20271001000000_orchestrator_model_limit_admissions extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.model_limit_admissions (
      limit_name text not null,
      call_id text not null,
      tenant_id text not null,
      at timestamptz not null,
      tokens integer not null,
      went_at timestamptz null,
      ended_at timestamptz null,
      expires_at timestamptz not null,
      primary key (limit_name, call_id))`);
    this.addSql(`create index model_limit_admissions_at_idx on ${s}.model_limit_admissions (limit_name, at)`);
  }
}
