import { RunId, UsageDimension, usageDimensionsOf, UsageReport, utcMonthStart } from '@ratchet/contracts';
import { z } from 'zod';
import { backendProblem } from '../backend-errors';
import type { Backends } from '../backends/backends';
import type { EdgePrincipal } from '../route-helpers';
import { InvalidRequestError, parseRequest } from '../problem-details';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A time (RFC 3339) or a UTC day (`2026-12-07`: its midnight), as an RFC 3339 time. */
const TimeOrDay = z
  .string()
  .max(64)
  .refine(
    (v) =>
      DAY.test(v) ? !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) : z.iso.datetime({ offset: true }).safeParse(v).success,
    {
      error: 'an RFC 3339 time or a day (YYYY-MM-DD, UTC)',
    },
  )
  .transform((v) => new Date(DAY.test(v) ? `${v}T00:00:00Z` : v).toISOString());

export const UsageQuery = z.object({
  from: TimeOrDay.optional(),
  to: TimeOrDay.optional(),
  by: z
    .string()
    .max(64)
    .optional()
    .transform((v, ctx) => {
      const parsed = usageDimensionsOf(v);
      if (parsed.ok) return parsed.dims;
      ctx.addIssue({
        code: 'custom',
        message:
          'unknown' in parsed
            ? `unknown dimension ${JSON.stringify(parsed.unknown)} (one of ${UsageDimension.options.join(', ')})`
            : `${parsed.twice} is named twice`,
      });
      return z.NEVER;
    }),
  agent: z.string().min(1).max(128).optional(),
  model: z.string().min(1).max(256).optional(),
  runId: RunId.optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
});

export const UsageSchemas = { UsageQuery, UsageReport } as const;

/**
 * What the tenant's model calls spent (`GET /v1/usage`, docs/flow-control.md "Usage"), relayed to the
 * orchestrator (`<prefix>.threads.<tenant>.usage`). Without `from`, the window starts at the current UTC
 * month's first midnight.
 */
export class UsageRoutes {
  constructor(
    private readonly backends: Pick<Backends, 'threads'>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  async report(principal: EdgePrincipal, rawQuery: unknown): Promise<UsageReport> {
    const q = parseRequest(UsageQuery, rawQuery, { in: 'query' });
    const from = q.from ?? utcMonthStart(this.now()).toISOString();
    if (q.to !== undefined && q.to <= from) {
      const message = `must be after from (${from}${q.from === undefined ? ": the month's start, as from is not given" : ''})`;
      throw new InvalidRequestError([{ code: 'custom', path: ['to'], message, input: q.to }], { in: 'query' });
    }
    const reply = await this.backends.threads(principal.tenantId, 'usage', {
      from,
      by: q.by ?? [],
      limit: q.limit,
      ...(q.to !== undefined ? { to: q.to } : {}),
      ...(q.agent !== undefined ? { agent: q.agent } : {}),
      ...(q.model !== undefined ? { model: q.model } : {}),
      ...(q.runId !== undefined ? { runId: q.runId } : {}),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'usage');
    return reply.usage;
  }
}
