import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A queued run's deadline to start (its request's time plus its agent's `queueTtlSeconds`): past it, the
 * admission pass asks its thread to end it (`run.queue_expired`). Indexed over the queued runs that have
 * one, so each beat reads only those whose time is up. Null for runs without a TTL and for runs that
 * started or ended.
 */
export class Migration20271201000003_orchestrator_run_queued_until extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.runs add column queued_until timestamptz null`);
    this.addSql(
      `create index runs_queue_expiry_idx on ${s}.runs (queued_until) where status = 'queued' and queued_until is not null`,
    );
  }
}
