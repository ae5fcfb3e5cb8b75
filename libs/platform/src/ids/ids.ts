import { createHash, randomUUID } from 'node:crypto';

/**
 * Ids derived from a request's idempotency key: the gateway and the orchestrator compute the same run
 * (and, for a request without a thread, the same thread) from `(tenant, requestId)`, so a resent
 * request can be answered with the run it already started, whoever receives it.
 */
export function runIdFor(tenantId: string, requestId: string): string {
  return `run_${digest('run', tenantId, requestId)}`;
}

export function threadIdFor(tenantId: string, requestId: string): string {
  return `th_${digest('thread', tenantId, requestId)}`;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22);
}
