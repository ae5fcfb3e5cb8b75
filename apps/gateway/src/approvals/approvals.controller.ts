import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApprovalView } from '@ratchet/contracts';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { parseRequest } from '@ratchet/http-edge';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiProblems, ApiQueryParams } from '@ratchet/http-edge';
import { ApprovalsClient } from './approvals.client';
import { ApprovalIdParam, DecisionBody, ListApprovalsQuery, parseParams, problemFor } from './approvals.http';

/**
 * Human-in-the-loop (docs/approvals.md). Any authenticated principal of the tenant may ask; the approvals
 * service answers with what that principal may see and decide (the approval's role, four-eyes). The tenant
 * is the credential's, never the request's: another tenant's approval id answers 404.
 */
const ApprovalList = z.object({ approvals: z.array(ApprovalView) });
const ApprovalPath = z.object({ id: ApprovalIdParam });

@ApiTags('approvals')
@Controller('v1/approvals')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsClient) {}

  @Get()
  @ApiOperation({
    summary: 'The approvals and escalations you may see, newest first',
    description:
      'Each one says whether you may decide it (`canDecide`: the approval names a role you hold, and you did not start the run when it asks for four eyes).',
  })
  @ApiQueryParams(ListApprovalsQuery, {
    threadId: 'Only approvals of this thread',
    agent: 'Only approvals of runs of this agent',
    olderThan: 'Only approvals requested at least this long ago: seconds, or 30s, 5m, 2h, 1d',
    limit: 'At most this many',
  })
  @ApiJsonResponse(200, 'The approvals', 'ApprovalList', ApprovalList)
  async list(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Query() rawQuery: Record<string, unknown>,
  ): Promise<{ approvals: ApprovalView[] }> {
    const query = parseParams(ListApprovalsQuery, rawQuery, 'query');
    const reply = await this.approvals.call({
      op: 'list',
      tenantId: principal.tenantId,
      principal: { id: principal.principalId, roles: [...principal.roles] },
      ...(query.status ? { status: query.status } : {}),
      ...(query.threadId ? { threadId: query.threadId } : {}),
      ...(query.agent ? { agent: query.agent } : {}),
      ...(query.olderThan !== undefined ? { olderThanSeconds: query.olderThan } : {}),
      ...(query.limit ? { limit: query.limit } : {}),
    });
    if (!reply.ok) throw problemFor(reply);
    if (!('approvals' in reply)) throw new Error('approvals list: unexpected reply');
    return { approvals: reply.approvals };
  }

  @Get(':id')
  @ApiOperation({ summary: 'An approval or escalation' })
  @ApiPathParams(ApprovalPath, { id: 'The approval id' })
  @ApiJsonResponse(200, 'The approval', 'ApprovalView', ApprovalView)
  @ApiProblems({ 404: 'No such approval in your tenant', 403: 'The approval is hidden from your roles' })
  async get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param('id') rawId: string): Promise<ApprovalView> {
    const approvalId = parseParams(ApprovalIdParam, rawId, 'path');
    const reply = await this.approvals.call({
      op: 'get',
      tenantId: principal.tenantId,
      principal: { id: principal.principalId, roles: [...principal.roles] },
      approvalId,
    });
    if (!reply.ok) throw problemFor(reply);
    if (!('approval' in reply)) throw new Error('approvals get: unexpected reply');
    return reply.approval;
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
  @ApiJsonBody('ApprovalDecisionBody', DecisionBody)
  @ApiJsonResponse(200, 'The decided approval', 'ApprovalView', ApprovalView)
  @ApiProblems({
    403: 'You may not decide it (a role it names is missing, or four eyes and you started the run)',
    404: 'No such approval in your tenant',
    409: 'Already decided, or expired; the body names the decision of record',
  })
  async decide(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param('id') rawId: string,
    @Body() rawBody: unknown,
  ): Promise<ApprovalView> {
    const approvalId = parseParams(ApprovalIdParam, rawId, 'path');
    const body = parseRequest(DecisionBody, rawBody, { in: 'body' });
    const reply = await this.approvals.call({
      op: 'decide',
      tenantId: principal.tenantId,
      principal: { id: principal.principalId, roles: [...principal.roles] },
      approvalId,
      decision: body.decision,
      reason: body.reason,
      ...(body.result !== undefined ? { result: body.result } : {}),
    });
    if (!reply.ok) throw problemFor(reply);
    if (!('approval' in reply)) throw new Error('approvals decide: unexpected reply');
    return reply.approval;
  }
}
