import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApprovalView } from '@ratchet/contracts';
import {
  ApiJsonBody,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ApiQueryParams,
  ApprovalList,
  ApprovalPath,
  ApprovalsRoutes,
  DecisionBody,
  ListApprovalsQuery,
} from '@ratchet/http-edge';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { Idempotent } from '../http/idempotent';

/**
 * Human-in-the-loop (docs/approvals.md). Any authenticated principal of the tenant may ask; the approvals
 * service answers with what that principal may see and decide (the approval's role, four-eyes). The tenant
 * is the credential's, never the request's: another tenant's approval id answers 404.
 */
@ApiTags('approvals')
@Controller('v1/approvals')
export class ApprovalsController {
  constructor(private readonly routes: ApprovalsRoutes) {}

  @Get()
  @ApiOperation({
    summary: 'The approvals and escalations you may see, newest first',
    description:
      'Each one says whether you may decide it (`canDecide`: the approval names a role you hold, and you did not start the run when it asks for four eyes).',
  })
  @ApiQueryParams(ListApprovalsQuery, {
    kind: 'Only these kinds, comma-separated: tool (approvals), escalation (uncertain effects), waitpoint',
    threadId: 'Only approvals of this thread',
    agent: 'Only approvals of runs of this agent',
    olderThan: 'Only approvals requested at least this long ago: seconds, or 30s, 5m, 2h, 1d',
    limit: 'At most this many',
  })
  @ApiJsonResponse(200, 'The approvals', 'ApprovalList', ApprovalList)
  list(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Query() rawQuery: Record<string, unknown>,
  ): Promise<{ approvals: ApprovalView[] }> {
    return this.routes.list(principal, rawQuery);
  }

  @Get(':id')
  @ApiOperation({ summary: 'An approval or escalation' })
  @ApiPathParams(ApprovalPath, { id: 'The approval id' })
  @ApiJsonResponse(200, 'The approval', 'ApprovalView', ApprovalView)
  @ApiProblems({ 404: 'No such approval in your tenant', 403: 'The approval is hidden from your roles' })
  get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param('id') rawId: string): Promise<ApprovalView> {
    return this.routes.get(principal, rawId);
  }

  /** Approve or reject (escalations: happened / retry / fail). Recorded once; deciding again answers 409. */
  @Post(':id/decision')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Decide an approval (approve / reject) or an escalation (happened / retry / fail)',
    description:
      'Recorded once, atomically with the event the run waits for. The approval must name a role you hold; with four eyes, whoever started the run cannot decide it.',
  })
  @ApiPathParams(ApprovalPath, { id: 'The approval id' })
  @Idempotent({ conflict: 'Already decided, or expired; the body names the decision of record' })
  @ApiJsonBody('ApprovalDecisionBody', DecisionBody)
  @ApiJsonResponse(200, 'The decided approval', 'ApprovalView', ApprovalView)
  @ApiProblems({
    403: 'You may not decide it (a role it names is missing, or four eyes and you started the run)',
    404: 'No such approval in your tenant',
  })
  decide(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param('id') rawId: string,
    @Body() rawBody: unknown,
  ): Promise<ApprovalView> {
    return this.routes.decide(principal, rawId, rawBody);
  }
}
