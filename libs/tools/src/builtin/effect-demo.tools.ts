import { z } from 'zod';
import type { Json } from '@ratchet/contracts';
import { defineTool, ToolError, type ToolContext } from '../tool';

/*
 * Test and demo tools for the effect ledger: one per kind, each calling an external "effect service" at
 * RATCHET_DEMO_EFFECT_URL (the crash suite runs one in the test process and counts effects per key).
 * Without the variable they fail with `demo.not_configured`. Not for production agents.
 *
 *   GET  <url>/read                 header X-Effect-Key: a read, counted, never an effect
 *   POST <url>/effects              header Idempotency-Key: applied once per key, repeats answered from memory
 *   POST <url>/effects              header X-Effect-Key only: applied every time it arrives
 *   GET  <url>/effects/lookup       header X-Effect-Key: 200 with the answer of the effect applied under
 *                                   that key, 404 when none was (what a payment API's "get by reference" is)
 */
export const DEMO_EFFECT_URL_ENV = 'RATCHET_DEMO_EFFECT_URL';

/** One request to the effect service; `acts`: whether it may have acted when no answer came back. */
async function send(path: string, init: RequestInit, ctx: ToolContext, acts: boolean): Promise<Response> {
  const base = process.env[DEMO_EFFECT_URL_ENV];
  if (!base) throw new ToolError('demo.not_configured', `${DEMO_EFFECT_URL_ENV} is not set`);
  try {
    return await fetch(new URL(path, base), { ...init, signal: ctx.signal });
  } catch (error) {
    throw new ToolError('demo.unreachable', (error as Error).message, true, {
      ...(acts ? { mayHaveActed: true } : {}),
      cause: error,
    });
  }
}

async function call(path: string, init: RequestInit, ctx: ToolContext): Promise<Json> {
  const res = await send(path, init, ctx, true);
  const body = (await res.json()) as Json;
  if (res.status >= 500) throw new ToolError('demo.status', `effect service answered ${res.status}`, true);
  if (res.status >= 400) throw new ToolError('demo.status', `effect service answered ${res.status}`);
  return body;
}

/** An effect the service applies every time it arrives (no Idempotency-Key): charge and payout. */
const applyUnkeyed = ({ item }: { item: string }, ctx: ToolContext) =>
  call(
    'effects',
    { method: 'POST', headers: { 'X-Effect-Key': ctx.idempotencyKey }, body: JSON.stringify({ item }) },
    ctx,
  );

const input = z.object({ item: z.string().min(1).max(200).describe('What to act on') });

export const demoEffectRead = defineTool({
  name: 'demo.effect.read',
  description: 'Reads an item from the demo effect service (no effect; safe to repeat).',
  kind: 'pure',
  timeoutMs: 10_000,
  input,
  execute: ({ item }, ctx) =>
    call(`read?item=${encodeURIComponent(item)}`, { headers: { 'X-Effect-Key': ctx.idempotencyKey } }, ctx),
});

export const demoEffectUpsert = defineTool({
  name: 'demo.effect.upsert',
  description: 'Writes an item to the demo effect service with an Idempotency-Key (a repeat is deduplicated).',
  kind: 'idempotent',
  timeoutMs: 10_000,
  input,
  execute: ({ item }, ctx) =>
    call(
      'effects',
      {
        method: 'POST',
        headers: { 'Idempotency-Key': ctx.idempotencyKey, 'X-Effect-Key': ctx.idempotencyKey },
        body: JSON.stringify({ item }),
      },
      ctx,
    ),
});

export const demoEffectCharge = defineTool({
  name: 'demo.effect.charge',
  description: 'Charges for an item at the demo effect service. Not deduplicated there: must never run twice.',
  kind: 'at-most-once',
  timeoutMs: 10_000,
  retry: { attempts: 1, backoffMs: 0 },
  input,
  execute: applyUnkeyed,
});

/**
 * A payout: at-most-once like `charge` (the service does not dedup it), with a `reconcile` hook that asks
 * the service whether an effect under the call's key was applied. After a crash between the ledger's
 * `started` and the outcome, the executor asks it: found, the effect is recorded as happened with the
 * service's answer as its result (not applied again); not found, the call runs again, once, safely.
 */
export const demoEffectPayout = defineTool({
  name: 'demo.effect.payout',
  description: 'Pays out for an item at the demo effect service (never twice; a crash is reconciled by asking it).',
  kind: 'at-most-once',
  timeoutMs: 10_000,
  retry: { attempts: 1, backoffMs: 0 },
  input,
  execute: applyUnkeyed,
  reconcile: async (_args, ctx) => {
    const res = await send('effects/lookup', { headers: { 'X-Effect-Key': ctx.idempotencyKey } }, ctx, false);
    if (res.status === 404) return { happened: false };
    if (!res.ok) throw new ToolError('demo.status', `effect service answered ${res.status} to a lookup`, true);
    return { happened: true, result: (await res.json()) as Json };
  },
});

export const DEMO_EFFECT_TOOLS = [demoEffectRead, demoEffectUpsert, demoEffectCharge, demoEffectPayout];
