import { EVENT_CONTENT, MESSAGE_CONTENT, type ChatMessage, type EventType, type ThreadEvent } from '@ratchet/contracts';
import { ContentSealedError, type ContentKeys } from '@ratchet/domain';
import { SealedFieldError, kidsIn, openFields, sealFields, type OnSealed } from './sealed-content';

/** An event as stored or published, before it is decoded: what opening needs of it. */
export interface RawEvent {
  id: string;
  type: string;
  tenantId?: string;
  threadId?: string;
  data: unknown;
}

const contentOf = (type: string) => EVENT_CONTENT[type as EventType];

/** Who a thread is of, from the events that start it: its creator, or the principal of its first run. */
function subjectOf(events: readonly ThreadEvent[]): string {
  for (const e of events) {
    if (e.type === 'thread.created') return e.data.createdBy;
    if (e.type === 'run.requested') return e.data.principal.id;
  }
  return 'unknown';
}

/**
 * Seals and opens a thread's content with its data key (ADR 0034). Without a master key it seals nothing
 * (content is stored in clear, as before) and sealed content reads as erased, or fails with `throw`.
 */
export class ContentSeal {
  constructor(readonly keys: ContentKeys) {}

  /** Whether what is written now is sealed. */
  get sealing(): boolean {
    return this.keys.configured;
  }

  /**
   * The events of one thread with their content sealed (copies; events without content are the same).
   * `fresh`: the thread starts with them (its key is looked up, not taken from a cache).
   */
  async sealEvents(
    tenantId: string,
    threadId: string,
    events: readonly ThreadEvent[],
    fresh = false,
  ): Promise<ThreadEvent[]> {
    if (!this.sealing || !events.some((e) => contentOf(e.type))) return events as ThreadEvent[];
    const key = await this.keys.forThread(tenantId, threadId, subjectOf(events), fresh);
    return events.map((e) => {
      const fields = contentOf(e.type);
      return fields ? ({ ...e, data: sealFields(e.data, fields, key, e.id) } as ThreadEvent) : e;
    });
  }

  /** Stored or published events with their content opened, before they are decoded. */
  async openEvents<E extends RawEvent>(events: readonly E[], onSealed: OnSealed): Promise<E[]> {
    const kids = new Set<string>();
    for (const e of events) {
      const fields = contentOf(e.type);
      if (fields) kidsIn(e.data, fields, kids);
    }
    if (kids.size === 0) return events as E[];
    const keys = await this.keys.byIds([...kids]);
    return events.map((e) => {
      const fields = contentOf(e.type);
      if (!fields) return e;
      try {
        return { ...e, data: openFields(e.data, fields, keys, e.id, onSealed) };
      } catch (error) {
        throw asSealedError(error, `event ${e.id} (${e.type}) of thread ${e.tenantId ?? '?'}/${e.threadId ?? '?'}`);
      }
    });
  }

  /** Messages `from`, `from + 1`… of a thread's conversation with their content sealed. */
  async sealMessages(
    tenantId: string,
    threadId: string,
    from: number,
    messages: readonly ChatMessage[],
  ): Promise<ChatMessage[]> {
    if (!this.sealing || messages.length === 0) return messages as ChatMessage[];
    const key = await this.keys.forThread(tenantId, threadId, 'unknown');
    return messages.map(
      (m, i) => sealFields(m, MESSAGE_CONTENT, key, messagePlace(tenantId, threadId, from + i)) as ChatMessage,
    );
  }

  /** Stored messages (with their numbers) opened. */
  async openMessages(
    tenantId: string,
    threadId: string,
    rows: readonly { seq: number; message: ChatMessage }[],
    onSealed: OnSealed,
  ): Promise<ChatMessage[]> {
    const kids = new Set<string>();
    for (const r of rows) kidsIn(r.message, MESSAGE_CONTENT, kids);
    if (kids.size === 0) return rows.map((r) => r.message);
    const keys = await this.keys.byIds([...kids]);
    return rows.map((r) => {
      try {
        return openFields(
          r.message,
          MESSAGE_CONTENT,
          keys,
          messagePlace(tenantId, threadId, r.seq),
          onSealed,
        ) as ChatMessage;
      } catch (error) {
        throw asSealedError(error, `message ${r.seq} of thread ${tenantId}/${threadId}`);
      }
    });
  }
}

function messagePlace(tenantId: string, threadId: string, seq: number): string {
  return `${tenantId}/${threadId}/message/${seq}`;
}

function asSealedError(error: unknown, where: string): unknown {
  return error instanceof SealedFieldError ? new ContentSealedError(error.kid, error.absence, where) : error;
}
