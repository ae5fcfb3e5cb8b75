import { createHash } from 'node:crypto';
import {
  DEFAULT_WAITPOINT_TTL_SECONDS,
  MAX_WAITPOINT_TTL_SECONDS,
  type JsonObject,
  type Waitpoint,
} from '@ratchet/contracts';
import { compileValueSchema } from './json-schema';
import { ToolError, type ToolContext } from './tool';

/**
 * The waitpoint id of a call: derived from the tenant, run, step and call, so a re-sent or retried call
 * opens the same waitpoint, never a second one, and a later wait of the same run has another id.
 */
export function waitpointIdFor(tenantId: string, runId: string, step: number, callId: string): string {
  const digest = createHash('sha256')
    .update(`${tenantId}\u0000${runId}\u0000${step}\u0000${callId}`)
    .digest('base64url');
  return `wp_${digest.slice(0, 22)}`;
}

/** The waitpoint id of the call `ctx` runs. */
export function waitpointIdOf(ctx: ToolContext): string {
  return waitpointIdFor(ctx.tenantId, ctx.runId, ctx.step, ctx.callId);
}

/** What the tool itself says about the wait it opens (a remote service's answer); the agent's config fills the rest. */
export interface WaitpointTerms {
  ttlSeconds?: number;
  resultSchema?: JsonObject;
}

/**
 * The waitpoint the call `ctx` opens: its id, its expiry (the tool's TTL, else the agent's, else 24 h,
 * never past 30 days), what an expiry does (the agent decides: it is about its run) and the schema a
 * result must fit (the tool's, else the agent's). A schema that does not compile is the tool's failure
 * (`waitpoint.invalid_schema`), named before the run waits on something nobody could complete.
 */
export function openWaitpoint(ctx: ToolContext, terms: WaitpointTerms = {}): Waitpoint {
  const config = ctx.config.waitpoint;
  const resultSchema = terms.resultSchema ?? config?.result;
  if (resultSchema) {
    const compiled = compileValueSchema(resultSchema);
    if (!compiled.ok)
      throw new ToolError(
        'waitpoint.invalid_schema',
        `${terms.resultSchema ? "the tool's" : "the agent's"} waitpoint result schema: ${compiled.problem}`,
        false,
        { mayHaveActed: terms.resultSchema !== undefined },
      );
  }
  const ttlSeconds = Math.min(
    terms.ttlSeconds ?? config?.ttlSeconds ?? DEFAULT_WAITPOINT_TTL_SECONDS,
    MAX_WAITPOINT_TTL_SECONDS,
  );
  return {
    id: waitpointIdOf(ctx),
    expiresAt: new Date(ctx.now().getTime() + ttlSeconds * 1000).toISOString(),
    onExpiry: config?.onExpiry ?? 'tool_error',
    ...(resultSchema ? { resultSchema } : {}),
  };
}
