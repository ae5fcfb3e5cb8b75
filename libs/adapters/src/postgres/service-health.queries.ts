import { isoColumn, type SqlExecutor } from './sql';

/** Read-only health queries over any service schema's generic tables (`ratchet outbox`, `inbox`, `doctor`). */

export interface OutboxHealth {
  unsent: number;
  /** Seconds since the oldest unsent row was written, by the database clock; null when none. */
  oldestUnsentAgeSeconds: number | null;
  /** Unsent rows whose publish was tried more than `stuckAttempts` times. */
  stuck: { id: string; subject: string; attempts: number; createdAt: string }[];
  sentLastHour: number;
}

export async function outboxHealth(sql: SqlExecutor, stuckAttempts: number, stuckLimit = 20): Promise<OutboxHealth> {
  const [summary] = await sql.query<{ unsent: number; age: number | null; sent_last_hour: number }>(
    `select count(*) filter (where sent_at is null)::int as unsent,
       extract(epoch from now() - min(created_at) filter (where sent_at is null))::float8 as age,
       count(*) filter (where sent_at > now() - interval '1 hour')::int as sent_last_hour
     from ${sql.table('outbox')}`,
  );
  const stuck = await sql.query<{ id: string; subject: string; attempts: number; created_at: string }>(
    `select id, subject, attempts, ${isoColumn('created_at')} from ${sql.table('outbox')}
     where sent_at is null and attempts > ? order by created_at limit ?`,
    [stuckAttempts, stuckLimit],
  );
  return {
    unsent: summary?.unsent ?? 0,
    oldestUnsentAgeSeconds: summary?.age ?? null,
    stuck: stuck.map((r) => ({ id: r.id, subject: r.subject, attempts: r.attempts, createdAt: r.created_at })),
    sentLastHour: summary?.sent_last_hour ?? 0,
  };
}

export interface InboxHealth {
  /** Messages recorded as processed, per consumer. */
  consumers: { consumer: string; processed: number; lastProcessedAt: string | null; lastHour: number }[];
}

export async function inboxHealth(sql: SqlExecutor): Promise<InboxHealth> {
  const rows = await sql.query<{ consumer: string; processed: number; last: string | null; last_hour: number }>(
    `select consumer, count(*)::int as processed, ${isoColumn('max(processed_at)', 'last')},
       count(*) filter (where processed_at > now() - interval '1 hour')::int as last_hour
     from ${sql.table('inbox')} group by consumer order by consumer`,
  );
  return {
    consumers: rows.map((r) => ({
      consumer: r.consumer,
      processed: r.processed,
      lastProcessedAt: r.last,
      lastHour: r.last_hour,
    })),
  };
}

/** The database clock, to measure skew against this host. */
export async function databaseNow(sql: SqlExecutor): Promise<string> {
  const [row] = await sql.query<{ now: string }>(`select ${isoColumn('now()', 'now')}`);
  if (!row) throw new Error('select now() returned no row');
  return row.now;
}
