import type { ThreadEvent } from '@ratchet/contracts';
import type { ClaimedThread, ClaimItem, ThreadCommand, ThreadState, ThreadTx } from '@ratchet/domain';
import type { CachedThread, ThreadCache } from './thread-cache';

/**
 * The read side of a thread decision: claim the message and load its thread (projection, newer events,
 * facts for the decider) — or, for a thread this process committed last, take the cached state and
 * let the claim travel with the writes.
 */

export type Loaded = ClaimedThread<ThreadState> & {
  /** Decided on what this process last committed, without reading the thread (see ThreadCache). */
  cached?: CachedThread;
};

/**
 * What to claim and load for a message: the thread, and the rows of its feed (`feedSubject`) not marked
 * sent; a run request also asks whether its request id is known.
 */
export function claimItem(consumer: string, messageId: string, command: ThreadCommand, feedSubject: string): ClaimItem {
  const { tenantId, threadId } = command;
  const item: ClaimItem = { consumer, messageId, tenantId, threadId, unsentOn: feedSubject };
  if (command.type === 'RequestRun') {
    item.requestId = command.requestId;
    if (command.activeRunLimit !== undefined) item.activeRunsUpTo = command.activeRunLimit;
    if (command.waitingRunLimit !== undefined) item.waitingRunsUpTo = command.waitingRunLimit;
  }
  return item;
}

/**
 * Claim-and-load, except for threads this process committed last and still has in its cache: those
 * are not read; their claim travels with the writes, guarded by the cached version. A run request is
 * always read (its request id is looked up in the same statement).
 */
export async function claimAndLoadCached(
  tx: ThreadTx<ThreadState>,
  cache: ThreadCache,
  items: readonly ClaimItem[],
): Promise<Loaded[]> {
  const out: (Loaded | undefined)[] = items.map((item) => {
    if (item.requestId !== undefined) return undefined;
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
  const loaded = rest.length > 0 ? await tx.claimAndLoadMany(rest) : [];
  let next = 0;
  return out.map((l) => l ?? loaded[next++]!);
}

/**
 * The facts the claim-and-load found for the command (a known request id, the tenant's runs in flight and
 * waiting),
 * put on it for the decider.
 */
export function withFacts(command: ThreadCommand, loaded: Loaded): ThreadCommand {
  if (command.type !== 'RequestRun') return command;
  return {
    ...command,
    ...(loaded.known ? { known: loaded.known } : {}),
    ...(command.activeRunLimit !== undefined ? { activeRuns: loaded.activeRuns ?? 0 } : {}),
    ...(command.waitingRunLimit !== undefined ? { waitingRuns: loaded.waitingRuns ?? 0 } : {}),
  };
}

/**
 * The claim counted a tenant's runs in flight once for the whole batch (under the tenant's lock, ADR
 * 0045): a later request of the tenant in the same batch also counts the runs the batch admitted before it.
 */
export function withBatchAdmissions(loaded: Loaded, tenantId: string, admitted: ReadonlyMap<string, number>): Loaded {
  const more = admitted.get(tenantId) ?? 0;
  return loaded.activeRuns === undefined || more === 0 ? loaded : { ...loaded, activeRuns: loaded.activeRuns + more };
}

/** Adds the runs a decision admitted (requested and started or queued by it) to the batch's count. */
export function countAdmissions(admitted: Map<string, number>, tenantId: string, events: readonly ThreadEvent[]): void {
  const requested = new Set(events.filter((e) => e.type === 'run.requested').map((e) => e.runId));
  const n = events.filter(
    (e) => (e.type === 'run.started' || e.type === 'run.queued') && requested.has(e.runId),
  ).length;
  if (n > 0) admitted.set(tenantId, (admitted.get(tenantId) ?? 0) + n);
}
