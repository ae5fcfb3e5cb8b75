import { createHash } from 'node:crypto';

/**
 * Ids derived from a request's idempotency key, part of the contract so any publisher can compute
 * them: `run_` / `th_` + the first 22 characters of base64url(sha256("run" | "thread", NUL, tenant,
 * NUL, requestId)). The gateway, the orchestrator and clients agree on the run a request starts, and
 * a resent request is answered with the run it already started.
 */
export function runIdFor(tenantId: string, requestId: string): string {
  return `run_${digest('run', tenantId, requestId)}`;
}

/** The thread of a request that names none. */
export function threadIdFor(tenantId: string, requestId: string): string {
  return `th_${digest('thread', tenantId, requestId)}`;
}

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22);
}
