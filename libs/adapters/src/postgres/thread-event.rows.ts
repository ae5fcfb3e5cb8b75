import { decodeThreadEvent, type ThreadEvent } from '@ratchet/contracts';
import type { ContentSeal } from '../keys/content-seal';
import type { OnSealed } from '../keys/sealed-content';
import { isoColumn } from './sql';

/** A row of `thread_events` as selected with EVENT_COLUMNS. */
export interface EventRow {
  tenant_id: string;
  thread_id: string;
  version: number;
  id: string;
  type: string;
  v: number;
  run_id: string | null;
  at: string;
  causation_id: string;
  correlation_id: string;
  trace: unknown;
  data: unknown;
}

export const EVENT_COLUMNS = `tenant_id, thread_id, version, id, type, v, run_id, ${isoColumn(
  'at',
)}, causation_id, correlation_id, trace, data`;

/**
 * An event as stored, not decoded: its envelope, and its content as it is (sealed where it was sealed,
 * ADR 0034) — what an export or a re-publish writes, so a copy holds no more than the log does.
 */
export interface StoredEvent {
  id: string;
  type: string;
  v: number;
  tenantId: string;
  threadId: string;
  version: number;
  at: string;
  causationId: string;
  correlationId: string;
  runId?: string;
  trace?: unknown;
  data: unknown;
}

export function rowToStored(row: EventRow): StoredEvent {
  return {
    id: row.id,
    type: row.type,
    v: row.v,
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    version: row.version,
    at: row.at,
    causationId: row.causation_id,
    correlationId: row.correlation_id,
    data: row.data,
    ...(row.run_id === null ? {} : { runId: row.run_id }),
    ...(row.trace === null ? {} : { trace: row.trace }),
  };
}

/** A stored row back to an event of the current version (older versions are upcast). */
export function rowToEvent(row: EventRow): ThreadEvent {
  return decodeThreadEvent(rowToStored(row));
}

/** Stored rows back to events, their content opened first (`onSealed`: when a key is destroyed). */
export async function openRowsToEvents(
  content: ContentSeal,
  rows: readonly EventRow[],
  onSealed: OnSealed,
): Promise<ThreadEvent[]> {
  return (await content.openEvents(rows.map(rowToStored), onSealed)).map((e) => decodeThreadEvent(e));
}
