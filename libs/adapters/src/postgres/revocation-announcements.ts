import { HEADERS } from '@ratchet/contracts';
import type { OutboxMessage } from '@ratchet/domain';
import { SERVICE_SCHEMAS } from './migrations';
import { quoteIdent } from './sql';

/**
 * A revocation is announced to the orchestrators by an outbox row in the orchestrator's schema (all
 * services share one database), written by the same statement that writes the revocation: never
 * committed unannounced, never announced uncommitted. The orchestrators' relay publishes it (the writer
 * may publish it at once too: the row id is the message id, so JetStream and the consumer's inbox drop
 * the second copy).
 */

/** The columns of the revocation the announcement is built from, as SQL expressions over one row. */
export interface RevocationColumns {
  /** The revocation's id (text). */
  id: string;
  tenantId: string;
  principalId: string;
  /** `'principal'` or `'tokens'` (text). */
  scope: string;
  /** When it was committed (timestamptz). */
  at: string;
  by: string;
  reason: string;
}

/**
 * `insert into "orchestrator".outbox … select … from <source>` returning the row: the announcement of
 * each revocation `source` (a CTE name) yields. `?` placeholders: the subject prefix.
 */
export function announceRevocationsSql(source: string, c: RevocationColumns): string {
  const outbox = `${quoteIdent(SERVICE_SCHEMAS.orchestrator.schema)}.${quoteIdent('outbox')}`;
  const iso = (e: string) => `to_char(${e} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  return `insert into ${outbox} (id, subject, headers, payload)
    select 'revocation:' || ${c.id}, ?::text || '.cmd.revocation.' || ${c.tenantId},
      jsonb_build_object('${HEADERS.messageType}', 'principal.revoked', '${HEADERS.tenant}', ${c.tenantId}),
      jsonb_build_object('kind', 'principal.revoked', 'messageId', 'revocation:' || ${c.id},
        'tenantId', ${c.tenantId}, 'principalId', ${c.principalId}, 'scope', ${c.scope}, 'at', ${iso(c.at)},
        'by', ${c.by}, 'reason', ${c.reason})
    from ${source}
    returning id, subject, headers, payload`;
}

/** An announcement row as the statement returns it, ready to publish. */
export function announcementOf(row: {
  id: string;
  subject: string;
  headers: Record<string, string>;
  payload: unknown;
}): OutboxMessage {
  return { id: row.id, subject: row.subject, headers: row.headers, payload: row.payload };
}
