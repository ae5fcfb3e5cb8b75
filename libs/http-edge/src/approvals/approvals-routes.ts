import { ApprovalView } from '@ratchet/contracts';
import { z } from 'zod';
import { principalOf, UnexpectedReplyError, type EdgePrincipal } from '../route-helpers';
import { parseRequest } from '../problem-details';
import type { ApprovalsClient } from './approvals-client';
import { ApprovalIdParam, DecisionBody, ListApprovalsQuery, parseParams, problemFor } from './approvals-http';

export const ApprovalList = z.object({ approvals: z.array(ApprovalView) });
export const ApprovalPath = z.object({ id: ApprovalIdParam });

/**
 * Human-in-the-loop (`/v1/approvals`, docs/approvals.md), relayed to the approvals service. Any
 * authenticated principal of the tenant may ask; the approvals service answers with what that principal
 * may see and decide. The tenant is the credential's, never the request's: another tenant's id answers 404.
 */
export class ApprovalsRoutes {
  constructor(private readonly approvals: Pick<ApprovalsClient, 'call'>) {}

  async list(principal: EdgePrincipal, rawQuery: Record<string, unknown>): Promise<{ approvals: ApprovalView[] }> {
    const query = parseParams(ListApprovalsQuery, rawQuery, 'query');
    const reply = await this.approvals.call({
      op: 'list',
      tenantId: principal.tenantId,
      principal: principalOf(principal),
      ...(query.status ? { status: query.status } : {}),
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.threadId ? { threadId: query.threadId } : {}),
      ...(query.agent ? { agent: query.agent } : {}),
      ...(query.olderThan !== undefined ? { olderThanSeconds: query.olderThan } : {}),
      ...(query.limit ? { limit: query.limit } : {}),
    });
    if (!reply.ok) throw problemFor(reply);
    if (!('approvals' in reply)) throw new UnexpectedReplyError('approvals list: unexpected reply');
    return { approvals: reply.approvals };
  }

  async get(principal: EdgePrincipal, rawId: string): Promise<ApprovalView> {
    const approvalId = parseParams(ApprovalIdParam, rawId, 'path');
    const reply = await this.approvals.call({
      op: 'get',
      tenantId: principal.tenantId,
      principal: principalOf(principal),
      approvalId,
    });
    if (!reply.ok) throw problemFor(reply);
    if (!('approval' in reply)) throw new UnexpectedReplyError('approvals get: unexpected reply');
    return reply.approval;
  }

  /** Approve or reject (escalations: happened / retry / fail). Recorded once; deciding again answers 409. */
  async decide(principal: EdgePrincipal, rawId: string, rawBody: unknown): Promise<ApprovalView> {
    const approvalId = parseParams(ApprovalIdParam, rawId, 'path');
    const body = parseRequest(DecisionBody, rawBody, { in: 'body' });
    const reply = await this.approvals.call({
      op: 'decide',
      tenantId: principal.tenantId,
      principal: principalOf(principal),
      approvalId,
      decision: body.decision,
      reason: body.reason,
      ...(body.result !== undefined ? { result: body.result } : {}),
    });
    if (!reply.ok) throw problemFor(reply);
    if (!('approval' in reply)) throw new UnexpectedReplyError('approvals decide: unexpected reply');
    return reply.approval;
  }
}
