import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DEFAULT_WAITPOINT_TTL_SECONDS, type Waitpoint } from '@ratchet/contracts';
import { compileValueSchema } from '../json-schema';
import { defineTool, ToolError } from '../tool';

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

/**
 * Waits for the outside world (ADR 0041): the call opens a waitpoint and the run waits — outside its
 * working-time budget and its tenant's bound on runs in flight — until something outside completes it
 * with a result (`POST /v1/waitpoints/{id}/complete`), reports a failure, or its TTL passes. The agent's
 * tool entry says how long, what an expiry does and what the result must look like
 * (`config.waitpoint`). Pure: opening the same waitpoint again is harmless (its id is the call's).
 */
export const waitExternal = defineTool({
  name: 'wait.external',
  description:
    'Wait for something outside to finish (a CI build, a payment, a form) and get its result. Start the job first; ' +
    'pass the waitpoint id this call opens on to whoever completes it. The run sleeps, at no cost, until then.',
  kind: 'pure',
  timeoutMs: 5_000,
  retry: { attempts: 1, backoffMs: 0 },
  opensWaitpoint: true,
  input: z.object({
    about: z.string().min(1).max(2000).describe('What the run waits for, in a sentence (shown to operators)'),
  }),
  async execute(_args, ctx) {
    const config = ctx.config.waitpoint;
    if (config?.result) {
      const compiled = compileValueSchema(config.result);
      if (!compiled.ok)
        throw new ToolError('waitpoint.invalid_schema', `the agent's waitpoint result schema: ${compiled.problem}`);
    }
    const ttlSeconds = config?.ttlSeconds ?? DEFAULT_WAITPOINT_TTL_SECONDS;
    const waitpoint: Waitpoint = {
      id: waitpointIdFor(ctx.tenantId, ctx.runId, ctx.step, ctx.callId),
      expiresAt: new Date(ctx.now().getTime() + ttlSeconds * 1000).toISOString(),
      onExpiry: config?.onExpiry ?? 'tool_error',
      ...(config?.result ? { resultSchema: config.result } : {}),
    };
    return waitpoint;
  },
});
