import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The effect ledger learns three things: how often a redelivery was answered from the ledger instead
 * of running the tool (`dedup_hits`), the command that started the effect (so a human's `retry` can
 * run it again and any answer can reach the thread), and the human resolution of an uncertain effect.
 */
export class Migration20261210000000_tools_ledger_resolution extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.effects
      add column dedup_hits int not null default 0,
      add column command jsonb null,
      add column resolution text null check (resolution in ('happened', 'retry', 'fail')),
      add column resolved_by text null,
      add column resolved_at timestamptz null`);
  }
}
