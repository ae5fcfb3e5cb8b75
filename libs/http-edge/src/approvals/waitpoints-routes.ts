import { ApprovalView } from '@ratchet/contracts';
import { z } from 'zod';
import { principalOf, UnexpectedReplyError, type EdgePrincipal } from '../route-helpers';
import { notFound, parseRequest } from '../problem-details';
import type { ApprovalsClient } from './approvals-client';
import { ApprovalIdParam, CompleteWaitpointBody, parseParams, problemFor } from './approvals-http';

export const WaitpointPath = z.object({ id: ApprovalIdParam });

/**
 * Completing a waitpoint from outside (`/v1/waitpoints`, ADR 0041), relayed to the approvals service,
 * which keeps it: recorded once with the message that wakes its run. The tenant is the credential's,
 * never the request's: another tenant's waitpoint id answers 404, as an unknown one does.
 */
export class WaitpointsRoutes {
  constructor(private readonly approvals: Pick<ApprovalsClient, 'call'>) {}

  async complete(principal: EdgePrincipal, rawId: string, rawBody: unknown): Promise<ApprovalView> {
    const approvalId = parseParams(ApprovalIdParam, rawId, 'path');
    const body = parseRequest(CompleteWaitpointBody, rawBody, { in: 'body' });
    const reply = await this.approvals.call({
      op: 'complete',
      tenantId: principal.tenantId,
      principal: principalOf(principal),
      approvalId,
      ...(body.error !== undefined
        ? { outcome: 'failed' as const, error: body.error }
        : { outcome: 'completed' as const, result: body.result }),
    });
    // Another tenant's id answers exactly like an unknown one.
    if (!reply.ok) throw reply.error.code === 'not_found' ? notFound('waitpoint') : problemFor(reply);
    if (!('approval' in reply)) throw new UnexpectedReplyError('waitpoint complete: unexpected reply');
    return reply.approval;
  }
}
