import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { ApprovalView } from '@ratchet/contracts';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { parseRequest } from '../http/problem-details';
import { ApprovalsClient } from './approvals.client';
import { ApprovalIdParam, DecisionBody, ListApprovalsQuery, parseParams, problemFor } from './approvals.http';

/**
 * Human-in-the-loop (docs/approvals.md). Any authenticated principal of the tenant may ask; the approvals
 * service answers with what that principal may see and decide (the approval's role, four-eyes). The tenant
 * is the credential's, never the request's: another tenant's approval id answers 404.
 */
@Controller('v1/approvals')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsClient) {}

  @Get()
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
