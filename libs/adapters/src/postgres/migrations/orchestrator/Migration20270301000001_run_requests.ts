import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Request ids used again (see `requestDigest`):
 * - `runs.request_digest`: what the request asked (thread, agent, input, metadata), so a request id
 *   used again with another body is refused as a conflict. Null for runs requested before it existed.
 * - `runs.outcome`: how the run ended (status, output or error), so a resend of its request is answered
 *   with the same outcome. Null while the run goes on, and for runs that ended before it existed.
 */
export class Migration20270301000001_orchestrator_run_requests extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.runs add column request_digest text null, add column outcome jsonb null`);
  }
}
