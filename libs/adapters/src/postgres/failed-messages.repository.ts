import { storableText } from '@ratchet/domain';
import { isoColumn, type SqlExecutor } from './sql';

/** A message a consumer gave up on (termed): kept for `ratchet` inspection and replay by hand. */
export interface FailedMessage {
  consumer: string;
  subject: string;
  streamSeq: number | null;
  code: string;
  reason: string;
  payload: string;
}

export interface FailedMessageRow extends FailedMessage {
  id: number;
  failedAt: string;
}

export async function recordFailure(sql: SqlExecutor, failure: FailedMessage): Promise<void> {
  await sql.run(
    `insert into ${sql.table('failed_messages')} (consumer, subject, stream_seq, code, reason, payload)
     values (?, ?, ?, ?, ?, ?)`,
    // What was refused may hold exactly what Postgres cannot store: kept legible, never failing the record.
    [
      storableText(failure.consumer),
      storableText(failure.subject),
      failure.streamSeq,
      storableText(failure.code),
      storableText(failure.reason),
      storableText(failure.payload),
    ],
  );
}

/** Newest first. */
export async function listFailures(sql: SqlExecutor, limit = 100): Promise<FailedMessageRow[]> {
  const rows = await sql.query<{
    id: string;
    consumer: string;
    subject: string;
    stream_seq: string | null;
    code: string;
    reason: string;
    payload: string;
    failed_at: string;
  }>(
    `select id, consumer, subject, stream_seq, code, reason, payload, ${isoColumn('failed_at')}
     from ${sql.table('failed_messages')} order by id desc limit ?`,
    [limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    consumer: r.consumer,
    subject: r.subject,
    streamSeq: r.stream_seq === null ? null : Number(r.stream_seq),
    code: r.code,
    reason: r.reason,
    payload: r.payload,
    failedAt: r.failed_at,
  }));
}
