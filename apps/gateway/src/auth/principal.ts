import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { PresentedToken } from './jwt-revocation.rule';

/** Who is calling, as verified from the credential. The tenant comes from here and nowhere else. */
export interface AuthenticatedPrincipal {
  readonly tenantId: string;
  /** `key:<api key id>` for API keys, `jwt:<sub>` for JWT bearer tokens. */
  readonly principalId: string;
  readonly roles: readonly string[];
  /**
   * A deployment operator credential (`ratchet keys create --operator`): it changes what every tenant
   * is offered (shared agents) and acts for no tenant — its `tenantId` is `*`, which is no tenant.
   */
  readonly operator?: boolean;
  /** A JWT's `sub`, `iat` and `jti`, which the deny list is checked against (ADR 0035); absent for API keys. */
  readonly token?: PresentedToken;
}

export type Role = 'runner' | 'viewer' | 'approver' | 'admin' | 'operator';

/** The tenant id of an operator credential: not a valid tenant id, so no tenant-scoped lookup can match it. */
export const OPERATOR_TENANT = '*';

/** What the guard attaches the principal to. */
export interface AuthenticatedRequest extends IncomingMessage {
  principal?: AuthenticatedPrincipal;
}

/** The principal the guard verified; a route without the guard in front of it is a bug, so this throws. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): AuthenticatedPrincipal => {
    const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    if (!principal) throw new Error('CurrentPrincipal used on a route that was not authenticated');
    return principal;
  },
);
