import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { RunView } from '@ratchet/contracts';
import {
  ApiJsonBody,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ApiQueryParams,
  CreateRunBody,
  RunSchemas,
  RunsRoutes,
  type RunAccepted,
  type RunOutcomeView,
} from '@ratchet/http-edge';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Idempotent } from '../http/idempotent';
import { StartsRun } from './starts-run.decorator';

@ApiTags('runs')
@Controller('v1/runs')
export class RunsController {
  constructor(private readonly routes: RunsRoutes) {}

  /**
   * Starts a run: 202 once the request is durably on the bus; the orchestrator does the rest. The
   * same Idempotency-Key always answers the same runId/threadId and starts at most one run.
   */
  @StartsRun({
    operation: {
      summary: 'Start a run',
      description:
        'On a new thread, or on `threadId` (a name within your tenant). The same Idempotency-Key always answers the same run and starts at most one.',
    },
    idempotencyKey: 'Send one; retries with it are safe',
    body: ['CreateRunBody', CreateRunBody],
  })
  create(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() rawBody: unknown,
    @Headers() headers: Record<string, string | undefined>,
  ): Promise<RunAccepted> {
    return this.routes.create(principal, rawBody, headers);
  }

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({
    summary: "Search the tenant's runs, newest start first",
    description:
      'Filters combine (all must hold). Runs not started yet (queued) come first and have no start time, so `since`/`until` leave them out. Pages follow `nextCursor`.',
  })
  @ApiQueryParams(RunSchemas.SearchRunsQuery, {
    waiting:
      'Runs waiting for a human: `approval` (a call to approve), `operator` (an uncertain effect to decide), or `any`; a waiting run has status `running`',
    agent: 'Runs of this agent',
    threadId: 'Runs of this thread',
    since: 'Started at or after this time (RFC 3339)',
    until: 'Started before this time (RFC 3339)',
    metadata: '`key=value` the run request’s metadata holds; repeat for several (all must hold)',
    limit: 'At most this many',
    cursor: 'nextCursor of the previous page',
  })
  @ApiJsonResponse(200, 'A page of runs', 'RunList', RunSchemas.RunList)
  search(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    return this.routes.search(principal, rawQuery);
  }

  @Get(':runId')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'A run: status, steps and, once it ended, its outcome' })
  @ApiPathParams(RunSchemas.RunIdParam)
  @ApiJsonResponse(200, 'The run', 'RunView', RunView)
  @ApiProblems({ 404: 'No such run in your tenant (or its request was not processed yet)' })
  get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    return this.routes.get(principal, rawParams);
  }

  @Post(':runId/cancel')
  @HttpCode(202)
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Cancel a run',
    description:
      'Publishes `run.cancel` to the thread inbox; the run ends with `run.cancelled` (open tool calls are closed with explicit results). 409 when the run already ended.',
  })
  @ApiPathParams(RunSchemas.RunIdParam)
  @Idempotent({ conflict: 'The run already ended' })
  @ApiJsonBody('CancelRunBody', RunSchemas.CancelBody)
  @ApiJsonResponse(202, 'The cancel is on the thread inbox', 'CancelAccepted', RunSchemas.CancelAccepted)
  @ApiProblems({ 404: 'No such run in your tenant' })
  cancel(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Body() rawBody: unknown,
    @Headers() headers: Record<string, string | undefined>,
  ) {
    return this.routes.cancel(principal, rawParams, rawBody, headers);
  }

  @Get(':runId/outcome')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({
    summary: 'Wait for a run to end',
    description:
      'Answers 200 with `done: true` as soon as the run has ended, or 202 with `done: false` when `waitSeconds` pass first (ask again).',
  })
  @ApiPathParams(RunSchemas.RunIdParam)
  @ApiQueryParams(RunSchemas.OutcomeQuery, { waitSeconds: 'How long to wait for the run to end' })
  @ApiJsonResponse(200, 'The run ended', 'RunOutcomeView', RunSchemas.RunOutcomeView)
  @ApiJsonResponse(202, 'Still running when the wait ended', 'RunOutcomeView', RunSchemas.RunOutcomeView)
  @ApiProblems({ 404: 'No such run in your tenant' })
  outcome(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
    @Req() req: IncomingMessage,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<RunOutcomeView> {
    return this.routes.outcome(principal, rawParams, rawQuery, req, res);
  }
}
