import { z } from 'zod';
import { IsoTime, RunId } from './ids';

/*
 * What a tenant's model calls spent (`GET /v1/usage`, `ratchet usage`), read from the orchestrator's
 * record of every model answer the log holds (docs/flow-control.md, "Usage"). Days and months are UTC.
 */

/** What usage figures can be grouped by: a UTC day (`2026-12-07`) or month (`2026-12`), an agent, a model, a run. */
export const UsageDimension = z.enum(['day', 'month', 'agent', 'model', 'run']);
export type UsageDimension = z.infer<typeof UsageDimension>;

/** Comma-separated dimensions (`day,model`) in their order, or the first name that is unknown or repeated. */
export function usageDimensionsOf(
  text: string | undefined,
): { ok: true; dims: UsageDimension[] } | { ok: false; unknown: string } | { ok: false; twice: UsageDimension } {
  const names = text === undefined || text === '' ? [] : text.split(',').map((s) => s.trim());
  const dims: UsageDimension[] = [];
  for (const name of names) {
    const d = UsageDimension.safeParse(name);
    if (!d.success) return { ok: false, unknown: name };
    if (dims.includes(d.data)) return { ok: false, twice: d.data };
    dims.push(d.data);
  }
  return { ok: true, dims };
}

/** The first midnight (UTC) of the month `at` (ms since the epoch) is in: a usage window's default start. */
export function utcMonthStart(at: number): Date {
  const d = new Date(at);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

export const ThreadsUsageRequest = z
  .strictObject({
    from: IsoTime.describe('Calls answered at or after this time'),
    to: IsoTime.optional().describe('Calls answered before this time (absent: up to now)'),
    by: z.array(UsageDimension).max(5).default([]).describe('Group by these, in this order (none: one total)'),
    agent: z.string().min(1).max(128).optional().describe('Only calls of this agent'),
    model: z.string().min(1).max(256).optional().describe('Only calls answered by this model'),
    runId: RunId.optional().describe('Only calls of this run'),
    limit: z.number().int().min(1).max(10_000).default(1_000).describe('At most this many groups'),
  })
  .describe('ThreadsUsageRequest');
export type ThreadsUsageRequest = z.output<typeof ThreadsUsageRequest>;

export const UsageFigures = z
  .object({
    calls: z.number().int().nonnegative().describe('Model calls answered (one `model.responded` each)'),
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    totalTokens: z.number().int().nonnegative(),
    cost: z
      .number()
      .nonnegative()
      .describe('What the answered calls cost by the price table (MODEL_PRICES), in its currency (to the millionth)'),
    unpricedCalls: z
      .number()
      .int()
      .nonnegative()
      .describe('Answered calls of models the price table has no price for: their cost is not in `cost`'),
    abortedCalls: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'Calls the log shows made whose answer the run did not use: the worker making one stopped mid-call (a redelivery), or its answer came after the run moved on (`result.ignored`). They may have been billed; their tokens are unknown and not in the token figures',
      ),
  })
  .describe('UsageFigures');
export type UsageFigures = z.infer<typeof UsageFigures>;

export const UsageGroup = z
  .object({
    day: z.string().optional().describe('UTC day, YYYY-MM-DD (grouped by day)'),
    month: z.string().optional().describe('UTC month, YYYY-MM (grouped by month)'),
    agent: z.string().optional(),
    model: z.string().optional(),
    runId: z.string().optional(),
  })
  .extend(UsageFigures.shape)
  .describe('UsageGroup');
export type UsageGroup = z.infer<typeof UsageGroup>;

export const UsageReport = z
  .object({
    from: IsoTime,
    to: IsoTime.optional(),
    by: z.array(UsageDimension),
    groups: z.array(UsageGroup).describe('One per combination of the `by` values that has calls, in their order'),
    truncated: z.boolean().describe('More groups than `limit`: the figures of the rest are in `total` only'),
    total: UsageFigures.describe('Every call of the window and filters'),
  })
  .describe('UsageReport');
export type UsageReport = z.infer<typeof UsageReport>;
