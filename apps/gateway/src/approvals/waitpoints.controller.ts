import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApprovalView } from '@ratchet/contracts';
import {
  ApiJsonBody,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  CompleteWaitpointBody,
  WaitpointPath,
  WaitpointsRoutes,
} from '@ratchet/http-edge';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { RequireRoles } from '../auth/roles.decorator';
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
