import type { ChatMessage } from '@ratchet/contracts';
import type { ThreadState } from '@ratchet/domain';

/** What this process last committed for a thread. */
export interface CachedThread {
  version: number;
  state: ThreadState;
  /** The whole conversation at `version`, when it is known here and small enough to keep. */
  transcript?: readonly ChatMessage[] | undefined;
}

/**
 * The threads this process committed most recently, by `tenant/thread`: the state it wrote and its
 * version. A message for such a thread is decided on the cached state without reading the thread; the
 * write is optimistic (its first event must directly follow the cached version, and the inbox claim
 * travels with the writes), so if anything else moved the thread the transaction fails and the message
 * is decided again from the database. Least recently used entries go first.
 */
export class ThreadCache {
  private readonly entries = new Map<string, CachedThread>();

  constructor(
    private readonly maxThreads: number,
    /** Conversations longer than this are not kept (they are read when a model call needs them). */
    private readonly maxMessages: number,
  ) {}

  get(tenantId: string, threadId: string): CachedThread | undefined {
    const key = keyOf(tenantId, threadId);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Refresh its place in the LRU order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  set(tenantId: string, threadId: string, entry: CachedThread): void {
    if (this.maxThreads <= 0) return;
    const key = keyOf(tenantId, threadId);
    this.entries.delete(key);
    const transcript = entry.transcript && entry.transcript.length <= this.maxMessages ? entry.transcript : undefined;
    this.entries.set(key, { version: entry.version, state: entry.state, transcript });
    while (this.entries.size > this.maxThreads) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  delete(tenantId: string, threadId: string): void {
    this.entries.delete(keyOf(tenantId, threadId));
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(tenantId: string, threadId: string): string {
  return `${tenantId}\u0000${threadId}`;
}
