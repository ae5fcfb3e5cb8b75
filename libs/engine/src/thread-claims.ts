import type { RunSlot, ThreadEvent } from '@ratchet/contracts';
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
  if (command.type === 'AdmitRun' && command.activeRunLimit !== undefined) item.activeRunsUpTo = command.activeRunLimit;
  if ((command.type === 'RequestRun' || command.type === 'AdmitRun') && command.slots && command.slots.length > 0)
    item.slotsUpTo = command.slots;
  if ((command.type === 'RequestRun' || command.type === 'AdmitRun') && command.throttle) {
    const { key, limit, periodSeconds } = command.throttle;
    item.throttleUpTo = { key, limit, since: new Date(Date.parse(command.at) - periodSeconds * 1000).toISOString() };
  }
  if ((command.type === 'RequestRun' || command.type === 'AdmitRun') && command.debounce)
    item.debounceOf = command.debounce.key;
  return item;
}

/**
 * Claim-and-load, except for threads this process committed last and still has in its cache: those
 * are not read; their claim travels with the writes, guarded by the cached version. A run request and an
 * admission are always read (the request id and the tenant's runs in flight are looked up in the same
 * statement, the count under the tenant's lock).
 */
export async function claimAndLoadCached(
  tx: ThreadTx<ThreadState>,
  cache: ThreadCache,
  items: readonly ClaimItem[],
): Promise<Loaded[]> {
  const out: (Loaded | undefined)[] = items.map((item) => {
    if (
      item.requestId !== undefined ||
      item.activeRunsUpTo !== undefined ||
      item.slotsUpTo !== undefined ||
      item.throttleUpTo !== undefined ||
      item.debounceOf !== undefined
    )
      return undefined;
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
  if (command.type !== 'RequestRun' && command.type !== 'AdmitRun') return command;
  const slotRuns = command.slots && command.slots.length > 0 ? { slotRuns: loaded.slotRuns ?? {} } : {};
  const throttleStarts = command.throttle ? { throttleStarts: loaded.throttleStarts ?? 0 } : {};
  if (command.type === 'AdmitRun')
    return {
      ...command,
      ...(command.activeRunLimit !== undefined ? { activeRuns: loaded.activeRuns ?? 0 } : {}),
      ...slotRuns,
      ...throttleStarts,
      ...(command.debounce && loaded.debounceLatest !== undefined ? { debounceLatest: loaded.debounceLatest } : {}),
    };
  return {
    ...command,
    ...slotRuns,
    ...throttleStarts,
    ...(loaded.known ? { known: loaded.known } : {}),
    ...(command.activeRunLimit !== undefined ? { activeRuns: loaded.activeRuns ?? 0 } : {}),
    ...(command.waitingRunLimit !== undefined ? { waitingRuns: loaded.waitingRuns ?? 0 } : {}),
  };
}

/** The batch's own admissions, per tenant, per concurrency key and per throttle (see `withBatchAdmissions`). */
const keyOf = (tenantId: string, slotKey?: string) =>
  slotKey === undefined ? tenantId : `${tenantId}\u0000${slotKey}`;
const throttleKeyOf = (tenantId: string, throttleKey: string) => `${tenantId}\u0001${throttleKey}`;

/**
 * The claim counted a tenant's runs in flight (and each key's) once for the whole batch, under their locks
 * (ADR 0045): a later request of the tenant in the same batch also counts the runs the batch admitted
 * before it.
 */
export function withBatchAdmissions(
  loaded: Loaded,
  command: ThreadCommand,
  admitted: ReadonlyMap<string, number>,
): Loaded {
  const { tenantId } = command;
  const more = admitted.get(keyOf(tenantId)) ?? 0;
  let out: Loaded =
    loaded.activeRuns === undefined || more === 0 ? loaded : { ...loaded, activeRuns: loaded.activeRuns + more };
  const throttle = (command.type === 'RequestRun' || command.type === 'AdmitRun') && command.throttle;
  if (throttle && loaded.throttleStarts !== undefined)
    out = {
      ...out,
      throttleStarts: loaded.throttleStarts + (admitted.get(throttleKeyOf(tenantId, throttle.key)) ?? 0),
    };
  if (loaded.slotRuns === undefined) return out;
  const slotRuns = Object.fromEntries(
    Object.entries(loaded.slotRuns).map(([k, n]) => [k, n + (admitted.get(keyOf(tenantId, k)) ?? 0)]),
  );
  return { ...out, slotRuns };
}

/**
 * Adds the runs a decision put in flight to the batch's counts (the tenant's and each of their keys'): runs
 * it requested and started or queued behind the thread's run (not those held for admission, which are not
 * in flight), and the held run an admission started. Runs it ended are not taken off (the counts stay on
 * the safe side). Each run it started counts once more under its throttle.
 */
export function countAdmissions(
  admitted: Map<string, number>,
  command: ThreadCommand,
  events: readonly ThreadEvent[],
): void {
  const { tenantId } = command;
  const slotsOf = new Map<string | undefined, readonly RunSlot[]>();
  for (const e of events) if (e.type === 'run.requested') slotsOf.set(e.runId, e.data.slots ?? []);
  const inFlight =
    command.type === 'AdmitRun'
      ? events.filter((e) => e.type === 'run.started').map(() => command.slots ?? [])
      : events
          .filter(
            (e) =>
              slotsOf.has(e.runId) &&
              (e.type === 'run.started' || (e.type === 'run.queued' && e.data.waitingFor === undefined)),
          )
          .map((e) => slotsOf.get(e.runId)!);
  const add = (key: string) => admitted.set(key, (admitted.get(key) ?? 0) + 1);
  for (const slots of inFlight) {
    add(keyOf(tenantId));
    for (const s of slots) add(keyOf(tenantId, s.key));
  }
  const throttle = (command.type === 'RequestRun' || command.type === 'AdmitRun') && command.throttle;
  if (throttle && events.some((e) => e.type === 'run.started' && e.runId === command.runId))
    add(throttleKeyOf(tenantId, throttle.key));
}
