import type { ThreadEvent } from '@ratchet/contracts';
import type { KnownRequest, ThreadCommand, ThreadProjectionRow, ThreadState, ThreadTx } from '@ratchet/domain';
import type { CachedThread, ThreadCache } from './thread-cache';

/**
 * The read side of a thread decision: claim the message and load its thread (projection, newer events,
 * facts for the decider) — or, for a thread this process committed last, take the cached state and
 * let the claim travel with the writes.
 */

export type Loaded = {
  claimed: boolean;
  projection: ThreadProjectionRow<ThreadState> | undefined;
  newer: ThreadEvent[];
  /** For a run request: the tenant's run that already has its request id, if any. */
  known?: KnownRequest | undefined;
  /** Decided on what this process last committed, without reading the thread (see ThreadCache). */
  cached?: CachedThread;
};
export type ClaimItem = { consumer: string; messageId: string; tenantId: string; threadId: string; requestId?: string };

/** What to claim and load for a message; a run request also asks whether its request id is known. */
export function claimItem(consumer: string, messageId: string, command: ThreadCommand): ClaimItem {
  const item: ClaimItem = { consumer, messageId, tenantId: command.tenantId, threadId: command.threadId };
  if (command.type === 'RequestRun') item.requestId = command.requestId;
  return item;
}

/** A store transaction that can claim messages and load their threads in one round trip (Postgres can). */
export type ClaimingTx = ThreadTx<ThreadState> & {
  claimAndLoadMany?: (items: readonly ClaimItem[]) => Promise<Loaded[]>;
  /** Claims with the writes, failing the commit if the thread moved past `version` (Postgres can). */
  claimOnWrite?: (consumer: string, messageId: string, tenantId: string, threadId: string, version: number) => void;
};

/** Claim, projection and newer events per message: one statement where the store offers it, else three calls each. */
async function claimAndLoad(tx: ClaimingTx, items: readonly ClaimItem[]): Promise<Loaded[]> {
  if (tx.claimAndLoadMany) return tx.claimAndLoadMany(items);
  const out: Loaded[] = [];
  for (const { consumer, messageId, tenantId, threadId, requestId } of items) {
    if (!(await tx.claimInbox(consumer, messageId))) {
      out.push({ claimed: false, projection: undefined, newer: [] });
      continue;
    }
    const projection = await tx.loadProjection(tenantId, threadId);
    const newer = await tx.loadEvents(tenantId, threadId, projection?.version ?? 0);
    const known = requestId === undefined ? undefined : await tx.findRequest(tenantId, requestId);
    out.push({ claimed: true, projection, newer, ...(known ? { known } : {}) });
  }
  return out;
}

/**
 * Claim-and-load, except for threads this process committed last and still has in its cache: those
 * are not read; their claim travels with the writes, guarded by the cached version. A run request is
 * always read (its request id is looked up in the same statement).
 */
export async function claimAndLoadCached(
  tx: ClaimingTx,
  cache: ThreadCache,
  items: readonly ClaimItem[],
): Promise<Loaded[]> {
  const out: (Loaded | undefined)[] = items.map((item) => {
    if (!tx.claimOnWrite || item.requestId !== undefined) return undefined;
    const cached = cache.get(item.tenantId, item.threadId);
    if (!cached) return undefined;
    tx.claimOnWrite(item.consumer, item.messageId, item.tenantId, item.threadId, cached.version);
    return {
      claimed: true,
      projection: { tenantId: item.tenantId, threadId: item.threadId, version: cached.version, state: cached.state },
      newer: [],
      cached,
    };
  });
  const rest = items.filter((_, i) => out[i] === undefined);
  const loaded = rest.length > 0 ? await claimAndLoad(tx, rest) : [];
  let next = 0;
  return out.map((l) => l ?? loaded[next++]!);
}

/** The facts the claim-and-load found for the command (a known request id), put on it for the decider. */
export function withFacts(command: ThreadCommand, loaded: Loaded): ThreadCommand {
  return command.type === 'RequestRun' && loaded.known ? { ...command, known: loaded.known } : command;
}
