import { applyDecorators, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, type ApiOperationOptions } from '@nestjs/swagger';
import { ApiJsonBody, ApiJsonResponse, ApiProblems, RunAcceptedSchema } from '@ratchet/http-edge';
import type { z } from 'zod';
import { RequireRoles } from '../auth/roles.decorator';
import { Idempotent } from '../http/idempotent';

/** The 429 of a route that starts a run at the tenant's bound on runs in flight. */
const RUNS_LIMIT =
  'The tenant has as many runs in flight (`code`: `tenant.runs_limit`; runs waiting for a human not counted) or as many runs waiting for a human (`code`: `tenant.waiting_runs_limit`) as the deployment allows one tenant; retry after `Retry-After`';

/**
 * What a route that starts a run declares (`POST /v1/runs`, `POST /v1/threads`): the runner role, 202
 * with `RunAccepted` once the request is on the bus, the Idempotency-Key header, its body and its
 * problems (429 at the tenant's bound on runs in flight among them).
 */
export function StartsRun(options: {
  operation: ApiOperationOptions;
  idempotencyKey: string;
  body: [id: string, schema: z.ZodType];
  /** What else a 409 means (besides a key used for another request). */
  conflict?: string;
  problems?: Record<number, string>;
}): MethodDecorator {
  // Applied last to first, as if stacked on the route in this order.
  return applyDecorators(
    ...[
      Post(),
      HttpCode(202),
      RequireRoles('runner'),
      ApiOperation(options.operation),
      Idempotent({ header: options.idempotencyKey, ...(options.conflict ? { conflict: options.conflict } : {}) }),
      ApiJsonBody(...options.body),
      ApiJsonResponse(202, 'Accepted: the run request is durably on the bus', 'RunAccepted', RunAcceptedSchema),
      ApiProblems({ ...options.problems, 429: RUNS_LIMIT }),
    ].reverse(),
  );
}
