import { ApprovalView, SubjectToken } from '@ratchet/contracts';
import { z } from 'zod';
import { principalOf, UnexpectedReplyError, type EdgePrincipal } from '../route-helpers';
import { notFound, parseRequest } from '../problem-details';
import type { ApprovalsClient } from './approvals-client';
import { signCallback, verifyCallback, type CallbackKey } from '../waitpoints/callback-token';
import { ApprovalIdParam, CompleteWaitpointBody, ListWaitpointsQuery, parseParams, problemFor } from './approvals-http';

export const WaitpointPath = z.object({ id: ApprovalIdParam });
export const WaitpointList = z.object({ waitpoints: z.array(ApprovalView) });
export const WaitpointCallbackPath = z.object({
  tenant: SubjectToken,
  id: ApprovalIdParam,
  token: z.string().min(1).max(256),
});

/** A waitpoint as its tenant's runners see it: with the path of its signed callback URL (null: none configured). */
export const WaitpointView = ApprovalView.extend({
  callbackPath: z
    .string()
    .nullable()
    .describe('POST here (on this gateway) to complete it without a credential; keep it as secret as a key'),
});
export type WaitpointView = z.infer<typeof WaitpointView>;

/** Who a signed callback URL completes a waitpoint as: no principal, the URL itself. */
const CALLBACK_PRINCIPAL = { id: 'callback', roles: ['runner'] };

/**
 * Completing a waitpoint from outside (`/v1/waitpoints`, ADR 0041), relayed to the approvals service,
 * which keeps it: recorded once with the message that wakes its run. The tenant is the credential's,
 * never the request's: another tenant's waitpoint id answers 404, as an unknown one does.
 */
export class WaitpointsRoutes {
  constructor(
    private readonly approvals: Pick<ApprovalsClient, 'call'>,
    /** The callback URL keys (first signs); none: no callback URLs. */
    private readonly callbackKeys: readonly CallbackKey[] = [],
  ) {}

  /** The caller's tenant's waitpoints (oldest first), filtered by status, thread and agent. */
  async list(principal: EdgePrincipal, rawQuery: Record<string, unknown>): Promise<{ waitpoints: ApprovalView[] }> {
    const query = parseParams(ListWaitpointsQuery, rawQuery, 'query');
    const reply = await this.approvals.call({
      op: 'list',
      tenantId: principal.tenantId,
      principal: principalOf(principal),
      kind: ['waitpoint'],
      ...(query.status ? { status: query.status } : {}),
      ...(query.threadId ? { threadId: query.threadId } : {}),
      ...(query.agent ? { agent: query.agent } : {}),
      ...(query.limit ? { limit: query.limit } : {}),
    });
    if (!reply.ok) throw problemFor(reply);
    if (!('approvals' in reply)) throw new UnexpectedReplyError('waitpoints list: unexpected reply');
    return { waitpoints: reply.approvals };
  }

  /** A waitpoint of the caller's tenant, with its callback path (another tenant's id: 404). */
  async get(principal: EdgePrincipal, rawId: string): Promise<WaitpointView> {
    const approvalId = parseParams(ApprovalIdParam, rawId, 'path');
    const reply = await this.approvals.call({
      op: 'get',
      tenantId: principal.tenantId,
      principal: principalOf(principal),
      approvalId,
    });
    if (!reply.ok) throw reply.error.code === 'not_found' ? notFound('waitpoint') : problemFor(reply);
    if (!('approval' in reply)) throw new UnexpectedReplyError('waitpoint get: unexpected reply');
    const w = reply.approval;
    if (w.kind !== 'waitpoint') throw notFound('waitpoint');
    const callbackPath =
      this.callbackKeys.length > 0 && w.expiresAt
        ? `/v1/waitpoints/callback/${principal.tenantId}/${w.id}/${signCallback(this.callbackKeys, principal.tenantId, w.id, w.expiresAt)}`
        : null;
    return { ...w, callbackPath };
  }

  /**
   * A signed callback URL was called: the token names the tenant and the waitpoint. A token that does not
   * verify (or no keys configured) answers 404, as an unknown waitpoint does: it tells a guesser nothing.
   */
  async callback(rawTenant: string, rawId: string, token: string, rawBody: unknown): Promise<ApprovalView> {
    const path = WaitpointCallbackPath.safeParse({ tenant: rawTenant, id: rawId, token });
    if (!path.success || !verifyCallback(this.callbackKeys, path.data.tenant, path.data.id, path.data.token))
      throw notFound('waitpoint');
    const body = parseRequest(CompleteWaitpointBody, rawBody, { in: 'body' });
    return this.completeAs(path.data.tenant, CALLBACK_PRINCIPAL, path.data.id, body);
  }

  async complete(principal: EdgePrincipal, rawId: string, rawBody: unknown): Promise<ApprovalView> {
    const approvalId = parseParams(ApprovalIdParam, rawId, 'path');
    const body = parseRequest(CompleteWaitpointBody, rawBody, { in: 'body' });
    return this.completeAs(principal.tenantId, principalOf(principal), approvalId, body);
  }

  private async completeAs(
    tenantId: string,
    principal: { id: string; roles: string[] },
    approvalId: string,
    body: CompleteWaitpointBody,
  ): Promise<ApprovalView> {
    const reply = await this.approvals.call({
      op: 'complete',
      tenantId,
      principal,
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
