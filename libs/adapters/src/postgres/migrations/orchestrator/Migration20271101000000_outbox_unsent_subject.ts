import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * The outbox rows of a subject not marked sent, by subject: the claim that loads a thread reads its feed
 * rows left unpublished (`ClaimItem.unsentOn`) with every run request and every decision on a thread not
 * cached, and must not scan every unsent row of the outbox for it.
 */
export class Migration20271101000000_orchestrator_outbox_unsent_subject extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create index outbox_unsent_subject_idx on ${s}.outbox (subject) where sent_at is null`);
  }
}
