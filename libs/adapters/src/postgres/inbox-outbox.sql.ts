import type { OutboxMessage } from '@ratchet/domain';
import { valuesList, type SqlExecutor } from './sql';

/** Shared by the thread store and the service transaction: one copy of the inbox/outbox SQL. */

/** True when this transaction is the first to claim the message; false for a redelivery. */
export async function claimInbox(sql: SqlExecutor, consumer: string, messageId: string): Promise<boolean> {
  const inserted = await sql.run(
    `insert into ${sql.table('inbox')} (consumer, message_id) values (?, ?) on conflict do nothing`,
    [consumer, messageId],
  );
  return inserted === 1;
}

/** One multi-row insert for the whole batch. */
export async function enqueueOutbox(sql: SqlExecutor, messages: readonly OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const params: unknown[] = [];
  const timed = messages.some((m) => m.leaseMs !== undefined || m.notBefore !== undefined);
  for (const m of messages) {
    params.push(m.id, m.subject, JSON.stringify(m.headers), JSON.stringify(m.payload));
    if (timed)
      params.push(m.leaseMs ?? null, m.notBefore ?? null, m.leaseMs !== undefined ? (m.leasedBy ?? null) : null);
  }
  // A leased row is available to the sweeper only from now + leaseMs (null * interval is null: not leased),
  // a delayed one from notBefore.
  await sql.run(
    timed
      ? `insert into ${sql.table('outbox')} (id, subject, headers, payload, available_at, leased_by) values ${valuesList(
          messages.length,
          "(?, ?, ?::jsonb, ?::jsonb, coalesce(now() + ?::float8 * interval '1 millisecond', ?::timestamptz), ?)",
        )}`
      : `insert into ${sql.table('outbox')} (id, subject, headers, payload) values ${valuesList(
          messages.length,
          '(?, ?, ?::jsonb, ?::jsonb)',
        )}`,
    params,
  );
}
