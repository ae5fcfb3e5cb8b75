import type { OutboxStore, PendingOutboxMessage } from '@ratchet/domain';
import type { Database } from './orm';
import { inTransaction, UNSENT_BY_ID } from './sql';

interface OutboxRow {
  id: string;
  subject: string;
  headers: Record<string, string>;
  payload: unknown;
  created_ms: number;
  attempts: number;
  leased: boolean;
}

/**
 * The relay's side of one schema's outbox. Rows are chosen by `sent_at is null` and locked with
 * SKIP LOCKED, never by "id greater than the last one seen": ids are not ordered, and a transaction
 * that commits late would otherwise be skipped forever.
 */
export class PgOutboxStore implements OutboxStore {
  constructor(private readonly db: Database) {}

  async relayBatch(
    limit: number,
    publish: (message: PendingOutboxMessage) => Promise<void>,
    ids?: string[],
    minAgeMs = 0,
  ): Promise<number> {
    if (ids !== undefined && ids.length === 0) return 0;
    return inTransaction(this.db.orm, this.db.schema, async (sql) => {
      const outbox = sql.table('outbox');
      const rows = await sql.query<OutboxRow>(
        `select id, subject, headers, payload, attempts,
           coalesce(available_at <= now() and leased_by is not null, false) as leased,
           (extract(epoch from created_at) * 1000)::float8 as created_ms
         from ${outbox}
         where ${ids ? `${UNSENT_BY_ID} and id in (?)` : 'sent_at is null and (available_at is null or available_at <= now())'}${minAgeMs > 0 ? ` and (created_at < now() - ? * interval '1 millisecond' or available_at > created_at)` : ''}
         order by created_at, id
         limit ?
         for update skip locked`,
        [...(ids ? [ids] : []), ...(minAgeMs > 0 ? [minAgeMs] : []), limit],
      );
      const sent: string[] = [];
      const failed: string[] = [];
      // Pipelined: every row's publish is on the wire before the first ack comes back (one connection,
      // so the server still receives them oldest first); one UPDATE marks them all afterwards.
      const outcomes = await Promise.allSettled(
        rows.map((row) =>
          publish({
            id: row.id,
            subject: row.subject,
            headers: row.headers,
            payload: row.payload,
            createdAt: new Date(row.created_ms),
            attempts: row.attempts,
            ...(row.leased ? { leaseExpired: true } : {}),
          }),
        ),
      );
      outcomes.forEach((outcome, i) => {
        const id = rows[i]!.id;
        // A failed row stays unsent; the attempt is counted so a message that can never be published shows up in `ratchet outbox`.
        (outcome.status === 'fulfilled' ? sent : failed).push(id);
      });
      if (sent.length > 0) {
        await sql.run(`update ${outbox} set sent_at = now(), attempts = attempts + 1 where id in (?)`, [sent]);
      }
      if (failed.length > 0) {
        await sql.run(`update ${outbox} set attempts = attempts + 1 where id in (?)`, [failed]);
      }
      return sent.length;
    });
  }

  async markSent(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    // One implicit transaction that does not wait for its WAL flush: a mark lost in a crash only means the
    // row is published once more (deduplicated by its Nats-Msg-Id, then by the consumer's inbox), so the
    // marks need not cost an fsync each, which on a busy machine competes with the commits that matter.
    await this.db.sql.run(
      `set local synchronous_commit = off;
       update ${this.db.sql.table('outbox')} set sent_at = now(), attempts = attempts + 1
       where id in (?) and ${UNSENT_BY_ID}`,
      [ids],
    );
  }

  async renewLease(id: string, leaseMs: number): Promise<void> {
    // Not waiting for the WAL flush either: a renewal lost in a crash of the database only shortens a
    // lease, which at worst repeats a model call (model calls may repeat).
    await this.db.sql.run(
      `set local synchronous_commit = off;
       update ${this.db.sql.table('outbox')} set available_at = now() + ?::float8 * interval '1 millisecond'
       where id = ? and sent_at is null`,
      [leaseMs, id],
    );
  }

  async releaseLease(id: string, holder: string): Promise<void> {
    await this.db.sql.run(
      `update ${this.db.sql.table('outbox')} set available_at = null, leased_by = null
       where id = ? and leased_by = ? and sent_at is null`,
      [id, holder],
    );
  }

  prune(olderThan: Date): Promise<number> {
    // A row still under a running lease (work a process is doing for it) stays, however old.
    return this.db.sql.run(
      `delete from ${this.db.sql.table('outbox')} where sent_at is not null and sent_at < ?::timestamptz
         and (available_at is null or available_at <= now())`,
      [olderThan.toISOString()],
    );
  }

  async lag(): Promise<{ unsent: number; oldestCreatedAt: Date | null }> {
    const rows = await this.db.sql.query<{ unsent: number; oldest_ms: number | null }>(
      `select count(*)::int as unsent, (extract(epoch from min(created_at)) * 1000)::float8 as oldest_ms
       from ${this.db.sql.table('outbox')} where sent_at is null`,
    );
    const row = rows[0];
    return {
      unsent: row?.unsent ?? 0,
      oldestCreatedAt: row?.oldest_ms == null ? null : new Date(row.oldest_ms),
    };
  }
}
