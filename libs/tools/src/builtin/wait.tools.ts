import { z } from 'zod';
import { defineTool } from '../tool';
import { openWaitpoint } from '../waitpoints';

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
    return openWaitpoint(ctx);
  },
});
