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

/**
 * What a request asked, as one digest: its thread (as named, or derived), agent, input and metadata.
 * A request id used again must come with the same digest; otherwise it is a conflict (`request.conflict`),
 * never a second run and never silently the first one. Keys are sorted, so property order does not matter.
 */
export function requestDigest(
  tenantId: string,
  request: { requestId: string; threadId?: string | undefined; agent: string; input: unknown; metadata?: unknown },
): string {
  const body = canonical({
    threadId: request.threadId ?? threadIdFor(tenantId, request.requestId),
    agent: request.agent,
    input: request.input,
    metadata: request.metadata ?? {},
  });
  return `sha256:${createHash('sha256').update(body).digest('base64url')}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
