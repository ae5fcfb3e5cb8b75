import type { OutboxMessage } from '@ratchet/domain';
import { recordFailure } from './failed-messages.repository';
import { claimInbox, enqueueOutbox } from './inbox-outbox.sql';
import type { Database } from './orm';
import { inTransaction, type SqlExecutor } from './sql';

/**
 * One transaction of a service that owns no thread log (tools, approvals, gateway, memory): the same
 * inbox/outbox discipline as the thread store, plus raw SQL for the service's own tables.
 */
export interface ServiceTx extends SqlExecutor {
  claimInbox(consumer: string, messageId: string): Promise<boolean>;
  enqueue(messages: OutboxMessage[]): Promise<void>;
  recordFailure(
    consumer: string,
    subject: string,
    streamSeq: number | null,
    code: string,
    reason: string,
    payload: string,
  ): Promise<void>;
  /** Raw SQL (see SqlExecutor for placeholders); rows for queries, [] for statements without RETURNING. */
  execute<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

/** Runs `work` in one transaction; commits when it resolves, rolls back when it throws. */
export function withServiceTx<T>(db: Database, work: (tx: ServiceTx) => Promise<T>): Promise<T> {
  return inTransaction(db.orm, db.schema, (sql) => {
    const tx: ServiceTx = {
      ...sql,
      claimInbox: (consumer, messageId) => claimInbox(sql, consumer, messageId),
      enqueue: (messages) => enqueueOutbox(sql, messages),
      recordFailure: (consumer, subject, streamSeq, code, reason, payload) =>
        recordFailure(sql, { consumer, subject, streamSeq, code, reason, payload }),
      execute: (text, params) => sql.query(text, params),
    };
    return work(tx);
  });
}
