import type { MemoryItem } from '@ratchet/contracts';

/**
 * Retention per namespace prefix, in seconds: how long an item in that part of the tree may outlive
 * its last write, whatever TTL the writer asked for (and however often it is read). The most
 * specific prefix wins, so `sessions/audit/` can keep longer than `sessions/`.
 */
export type RetentionPolicy = Readonly<Record<string, number>>;

/** Whole-segment prefix match: `users/al` is not within `users/alice`; "" holds everything. */
export function namespaceWithin(namespace: string, prefix: string): boolean {
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return p === '' || namespace === p || namespace.startsWith(`${p}/`);
}

export function retentionFor(namespace: string, policy: RetentionPolicy): number | undefined {
  let best: { length: number; seconds: number } | undefined;
  for (const [prefix, seconds] of Object.entries(policy)) {
    const length = prefix.replace(/\/$/, '').length;
    if (namespaceWithin(namespace, prefix) && (!best || length > best.length)) best = { length, seconds };
  }
  return best?.seconds;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** When an item written at `writtenAt` expires: the sooner of its TTL and its namespace's retention. */
export function expiryOf(
  writtenAt: Date,
  ttlSeconds: number | undefined,
  retentionSeconds: number | undefined,
): string | undefined {
  const bounds = [ttlSeconds, retentionSeconds].filter((s): s is number => s !== undefined);
  return bounds.length === 0 ? undefined : iso(writtenAt.getTime() + Math.min(...bounds) * 1000);
}

export function isExpired(item: Pick<MemoryItem, 'expiresAt'>, now: Date): boolean {
  return item.expiresAt !== undefined && Date.parse(item.expiresAt) <= now.getTime();
}

/**
 * The new expiry a read gives a refresh-on-read item: now + its TTL, capped by retention (counted from
 * the last write, so reading never keeps an item past its namespace's rule). Undefined when nothing
 * changes: the item does not refresh, or the refresh would not move the expiry later.
 */
export function refreshedExpiry(item: MemoryItem, now: Date, policy: RetentionPolicy): string | undefined {
  if (!item.refreshOnRead || item.ttlSeconds === undefined) return undefined;
  let next = now.getTime() + item.ttlSeconds * 1000;
  const retention = retentionFor(item.namespace, policy);
  if (retention !== undefined) next = Math.min(next, Date.parse(item.updatedAt) + retention * 1000);
  if (item.expiresAt !== undefined && next <= Date.parse(item.expiresAt)) return undefined;
  return iso(next);
}
