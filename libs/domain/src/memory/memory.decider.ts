import type {
  MemoryDeleteRequest,
  MemoryFailureReply,
  MemoryForgetSubjectRequest,
  MemoryGetRequest,
  MemoryItem,
  MemoryPutRequest,
} from '@ratchet/contracts';
import { mayChange, mayForget, mayRead, mayUseNamespace } from './memory.access';
import { memoryFailure } from './memory.errors';
import { checkLimits, type MemoryLimits } from './memory.limits';
import { expiryOf, isExpired, refreshedExpiry, retentionFor, type RetentionPolicy } from './memory.retention';
import { flattenValue, truncateUtf8 } from './memory.text';

/** The service's configured rules; time comes in on each call. */
export interface MemoryRules {
  limits: MemoryLimits;
  retention: RetentionPolicy;
}

/**
 * How a decided write must reach the table so concurrent writers cannot both win: an insert that does
 * nothing on conflict, or an update guarded by the version that was read (and, when replacing an
 * expired row, by its still being expired).
 */
export type WriteGuard =
  { mode: 'insert' } | { mode: 'update'; whereVersion: number } | { mode: 'replace-expired'; whereVersion: number };

export type PutDecision = { ok: true; item: MemoryItem; guard: WriteGuard } | MemoryFailureReply;
export type DeleteDecision = { ok: true; whereVersion: number } | MemoryFailureReply;
export type GetDecision = { ok: true; item: MemoryItem; refreshed: boolean } | MemoryFailureReply;

function notFound(namespace: string, key: string): MemoryFailureReply {
  return memoryFailure('not_found', `no item ${JSON.stringify(key)} in ${namespace}`);
}

function conflict(expected: number, actual: number | undefined): MemoryFailureReply {
  return memoryFailure(
    'version_conflict',
    actual === undefined
      ? `expected version ${expected}, but the item does not exist`
      : `expected version ${expected}, but the item is at version ${actual}`,
  );
}

/** Refused by the namespace alone (decided before any item is looked at, so it reveals none). */
function namespaceForbidden(namespace: string, access: 'read' | 'write'): MemoryFailureReply {
  const tree = namespace.split('/')[0];
  const why =
    tree === 'users'
      ? "a user tree is its own principal's (or an admin's)"
      : tree === 'org'
        ? `it needs the role memory.org.${access === 'read' ? 'read (or memory.org.write)' : 'write'}`
        : `it needs the role memory.team.<team>.${access === 'read' ? 'read (or .write)' : 'write'}`;
  return memoryFailure('forbidden', `may not ${access} in ${namespace}: ${why}`);
}

/** An expired row is gone as far as any caller can tell, even before the sweeper removes it. */
function live(stored: MemoryItem | undefined, now: Date): MemoryItem | undefined {
  return stored && !isExpired(stored, now) ? stored : undefined;
}

/**
 * A put: limits first (nothing oversized is ever looked at further), then ownership of an existing
 * item, then the expected version. An update keeps the owner and creation time; an expired item is
 * replaced by a new one at version 1, owned by the writer.
 */
export function decidePut(
  stored: MemoryItem | undefined,
  request: MemoryPutRequest,
  now: Date,
  rules: MemoryRules,
): PutDecision {
  const tooLarge = checkLimits(request, rules.limits);
  if (tooLarge) return tooLarge;
  if (!mayUseNamespace(request.principal, request.namespace, 'write'))
    return namespaceForbidden(request.namespace, 'write');
  const current = live(stored, now);
  if (current && !mayChange(request.principal, current.owner))
    return memoryFailure('forbidden', `only the owner or an admin may change ${request.namespace}/${request.key}`);
  if (request.expectedVersion !== undefined && request.expectedVersion !== (current?.version ?? 0))
    return conflict(request.expectedVersion, current?.version);

  const at = now.toISOString();
  const item: MemoryItem = {
    namespace: request.namespace,
    key: request.key,
    value: request.value,
    text: request.text ?? truncateUtf8(flattenValue(request.value), rules.limits.maxTextBytes),
    owner: current?.owner ?? request.principal.id,
    ...(request.subject === undefined ? {} : { subject: request.subject }),
    provenance: request.provenance,
    createdAt: current?.createdAt ?? at,
    updatedAt: at,
    version: (current?.version ?? 0) + 1,
    refreshOnRead: request.refreshOnRead,
    ...(request.ttlSeconds === undefined ? {} : { ttlSeconds: request.ttlSeconds }),
  };
  const expiresAt = expiryOf(now, request.ttlSeconds, retentionFor(request.namespace, rules.retention));
  if (expiresAt !== undefined) item.expiresAt = expiresAt;

  const guard: WriteGuard = current
    ? { mode: 'update', whereVersion: current.version }
    : stored
      ? { mode: 'replace-expired', whereVersion: stored.version }
      : { mode: 'insert' };
  return { ok: true, item, guard };
}

/** A get: expired items do not exist; a refresh-on-read item comes back with its new expiry. */
export function decideGet(
  stored: MemoryItem | undefined,
  request: MemoryGetRequest,
  now: Date,
  rules: MemoryRules,
): GetDecision {
  if (!mayUseNamespace(request.principal, request.namespace, 'read'))
    return namespaceForbidden(request.namespace, 'read');
  const current = live(stored, now);
  // Someone else's private item is as absent as a missing one: its existence is not revealed.
  if (!current || !mayRead(request.principal, current)) return notFound(request.namespace, request.key);
  const expiresAt = refreshedExpiry(current, now, rules.retention);
  return expiresAt === undefined
    ? { ok: true, item: current, refreshed: false }
    : { ok: true, item: { ...current, expiresAt }, refreshed: true };
}

export function decideDelete(stored: MemoryItem | undefined, request: MemoryDeleteRequest, now: Date): DeleteDecision {
  if (!mayUseNamespace(request.principal, request.namespace, 'write'))
    return namespaceForbidden(request.namespace, 'write');
  const current = live(stored, now);
  if (!current || !mayRead(request.principal, current)) return notFound(request.namespace, request.key);
  if (!mayChange(request.principal, current.owner))
    return memoryFailure('forbidden', `only the owner or an admin may delete ${request.namespace}/${request.key}`);
  if (request.expectedVersion !== undefined && request.expectedVersion !== current.version)
    return conflict(request.expectedVersion, current.version);
  return { ok: true, whereVersion: current.version };
}

export function decideForget(request: MemoryForgetSubjectRequest): { ok: true } | MemoryFailureReply {
  return mayForget(request.principal, request.subject)
    ? { ok: true }
    : memoryFailure('forbidden', 'only the subject itself or an admin may erase what memory holds about a subject');
}
