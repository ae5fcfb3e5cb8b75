import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApprovalView } from '@ratchet/contracts';
import {
  ApiJsonBody,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ApiQueryParams,
  CompleteWaitpointBody,
  ListWaitpointsQuery,
  WaitpointList,
  WaitpointCallbackPath,
  WaitpointPath,
  WaitpointsRoutes,
  WaitpointView,
} from '@ratchet/http-edge';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { Public, READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Idempotent } from '../http/idempotent';

/**
 * Waitpoints (docs/waitpoints.md): a run that waits for the outside world goes on when something outside
 * completes its waitpoint. The caller is a machine of the tenant (a CI job, a payment callback) with the
 * `runner` role; the tenant is the credential's, never the request's.
 */
@ApiTags('waitpoints')
@Controller('v1/waitpoints')
export class WaitpointsController {
  constructor(private readonly routes: WaitpointsRoutes) {}

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({
    summary: 'The waitpoints of your tenant, oldest first',
    description:
      'What runs wait for from the outside world; `status=pending` lists those still open. Any role of the tenant may list them (an approver sees only what its roles may complete).',
  })
  @ApiQueryParams(ListWaitpointsQuery, {
    status: 'Only waitpoints in this state',
    threadId: 'Only waitpoints of this thread',
    agent: 'Only waitpoints of runs of this agent',
    limit: 'At most this many (default 100)',
  })
  @ApiJsonResponse(200, 'The waitpoints', 'WaitpointList', WaitpointList)
  list(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Query() rawQuery: Record<string, unknown>,
  ): Promise<{ waitpoints: ApprovalView[] }> {
    return this.routes.list(principal, rawQuery);
  }

  @Get(':id')
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'A waitpoint, with the path of its signed callback URL',
    description:
      'The path (null when the deployment configures no callback keys) completes this one waitpoint without a credential: hand it to the job that will finish, and keep it as secret as a key.',
  })
  @ApiPathParams(WaitpointPath, { id: 'The waitpoint id' })
  @ApiJsonResponse(200, 'The waitpoint', 'WaitpointView', WaitpointView)
  @ApiProblems({ 403: 'Reading a waitpoint needs the runner role', 404: 'No such waitpoint in your tenant' })
  get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param('id') rawId: string): Promise<WaitpointView> {
    return this.routes.get(principal, rawId);
  }

  @Post('callback/:tenant/:id/:token')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Complete a waitpoint through its signed callback URL (no credential)',
    description:
      'The body and answers are those of `POST /v1/waitpoints/{id}/complete`. A token that is not this waitpoint’s answers 404, as an unknown waitpoint does.',
  })
  @ApiPathParams(WaitpointCallbackPath, {
    tenant: 'The tenant (signed into the token)',
    id: 'The waitpoint id',
    token: 'The signature (from GET /v1/waitpoints/{id})',
  })
  @ApiJsonBody('CompleteWaitpointBody', CompleteWaitpointBody)
  @ApiJsonResponse(200, 'The completed waitpoint', 'ApprovalView', ApprovalView)
  @ApiProblems({
    400: 'The body is neither a result nor an error, or the result does not fit the schema (`waitpoint.invalid_result`)',
    404: 'No such waitpoint, or the token is not its',
    409: 'Already completed with another body, expired, or closed with its run (`code` names which)',
  })
  callback(
    @Param('tenant') rawTenant: string,
    @Param('id') rawId: string,
    @Param('token') token: string,
    @Body() rawBody: unknown,
  ): Promise<ApprovalView> {
    return this.routes.callback(rawTenant, rawId, token, rawBody);
  }

  @Post(':id/complete')
  @HttpCode(200)
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Complete a waitpoint with a result, or report that the job outside failed',
    description:
      'Recorded once, atomically with the message that wakes the run. The same completion again answers as the first did and wakes nothing; another body is refused (409 `waitpoint.conflict`); so are an expired waitpoint (409 `waitpoint.expired`) and one whose run stopped (409 `waitpoint.closed`). A result that does not fit the schema the tool declared is refused (400 `waitpoint.invalid_result`, each problem named) and nothing is recorded.',
  })
  @ApiPathParams(WaitpointPath, { id: 'The waitpoint id (`waitpoint.created` in the run’s events)' })
  @Idempotent({ conflict: 'Already completed with another body, expired, or closed with its run (`code` names which)' })
  @ApiJsonBody('CompleteWaitpointBody', CompleteWaitpointBody)
  @ApiJsonResponse(200, 'The completed waitpoint', 'ApprovalView', ApprovalView)
  @ApiProblems({
    400: 'The body is neither a result nor an error, or the result does not fit the schema (`waitpoint.invalid_result`)',
    403: 'Completing a waitpoint needs the runner role',
    404: 'No such waitpoint in your tenant',
  })
  complete(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param('id') rawId: string,
    @Body() rawBody: unknown,
  ): Promise<ApprovalView> {
    return this.routes.complete(principal, rawId, rawBody);
  }
}
