import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  hashApiKey,
  type ApiKeyRecord,
  type ApiKeyRepository,
  type JwtRevocationRecord,
  type JwtRevocationsRepository,
} from '@ratchet/adapters';
import { TransientError } from '@ratchet/domain';
import { API_KEYS, JWT_REVOCATIONS, JWT_VERIFIER, RATE_LIMITER } from '../gateway.tokens';
import { PROBLEM_TYPES, ProblemException } from '@ratchet/http-edge';
import { presentedCredential } from './credentials';
import { tokenRevocation } from './jwt-revocation.rule';
import { InvalidTokenError, looksLikeJwt, type JwtVerifier } from './jwt.verifier';
import type { AuthenticatedPrincipal, AuthenticatedRequest, Role } from './principal';
import type { LimitDecision, RequestLimits } from './request-limits';
import { OPERATOR_TENANT } from './principal';
import { ANY_ROLE_KEY, OPERATOR_KEY, PUBLIC_KEY, ROLES_KEY } from './roles.decorator';

/** RFC 6750 §3: a 401 names the scheme the client should use. */
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="ratchet"' };

/**
 * Authenticates every route that is not @Public(): a JWT bearer token (when a JWKS is configured) or
 * an API key, then applies the per-credential rate limit, then checks the roles the route requires.
 * Only the SHA-256 of a presented key is looked up; revoked and expired keys do not match. Unknown,
 * revoked and expired keys get the same answer, so the response does not reveal which; so do a JWT the
 * tenant's deny list revokes (ADR 0035) and an invalid one.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(API_KEYS) private readonly apiKeys: ApiKeyRepository,
    @Inject(JWT_VERIFIER) private readonly jwt: JwtVerifier | null,
    @Inject(RATE_LIMITER) private readonly limits: RequestLimits,
    @Inject(JWT_REVOCATIONS) private readonly revocations: Pick<JwtRevocationsRepository, 'forSubject'>,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)) return true;

    const req = context.switchToHttp().getRequest<AuthenticatedRequest & { ip?: string }>();
    const source = req.ip ?? req.socket?.remoteAddress ?? 'unknown';
    const blocked = this.limits.beforeAuthentication(source);
    if (!blocked.ok) throw tooMany(blocked);
    let principal: AuthenticatedPrincipal;
    try {
      principal = await this.authenticate(req);
    } catch (error) {
      // Only a credential presented and refused counts against the source: not a request that presented
      // none (a browser, a probe), not our own unavailability (503).
      const presented = presentedCredential(req.headers).kind !== 'none';
      if (presented && error instanceof ProblemException && error.problem.status === 401)
        this.limits.authenticationFailed(source);
      throw error;
    }
    req.principal = principal;

    const limited = this.limits.authenticated(principal.tenantId, principal.principalId);
    if (!limited.ok) throw tooMany(limited);

    const operatorRoute = this.reflector.getAllAndOverride<boolean>(OPERATOR_KEY, targets) === true;
    if (operatorRoute && !principal.operator)
      throw forbidden(
        'This operation changes what every tenant is offered: it needs a deployment operator credential.',
      );
    if (!operatorRoute && principal.operator)
      throw forbidden('An operator credential acts on the deployment, not for a tenant; use a tenant credential.');

    const required = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, targets) ?? [];
    const missing = required.filter((role) => !principal.roles.includes(role));
    if (missing.length > 0) throw forbidden(`This operation requires the role(s): ${missing.join(', ')}.`);
    const anyOf = this.reflector.getAllAndOverride<Role[] | undefined>(ANY_ROLE_KEY, targets);
    if (anyOf && !anyOf.some((role) => principal.roles.includes(role)))
      throw forbidden(`This operation requires one of the roles: ${anyOf.join(', ')}.`);
    return true;
  }

  private async authenticate(req: AuthenticatedRequest): Promise<AuthenticatedPrincipal> {
    const credential = presentedCredential(req.headers);
    if (credential.kind === 'none')
      throw unauthenticated('Send an API key or a JWT as "Authorization: Bearer <credential>", or "x-api-key: <key>".');
    if (credential.kind === 'malformed') throw unauthenticated(`Malformed credentials: ${credential.reason}.`);

    if (this.jwt && credential.via === 'authorization' && looksLikeJwt(credential.secret)) {
      let verified: AuthenticatedPrincipal;
      try {
        verified = await this.jwt.verify(credential.secret);
      } catch (error) {
        if (error instanceof InvalidTokenError) throw unauthenticated(error.message);
        throw error;
      }
      const token = verified.token;
      if (token) {
        const entries = await this.denyList(verified.tenantId, token.subject);
        // The same answer as a bad signature: the response does not tell a revoked token from a forged one.
        if (tokenRevocation(entries, token).revoked) throw unauthenticated('The token is not valid.');
      }
      return withoutOperator(verified);
    }
    const key = await this.lookup(hashApiKey(credential.secret));
    if (!key) throw unauthenticated('The credential is not valid.');
    if (key.tenantId === OPERATOR_TENANT)
      return { tenantId: OPERATOR_TENANT, principalId: `key:${key.id}`, roles: ['operator'], operator: true };
    return withoutOperator({ tenantId: key.tenantId, principalId: `key:${key.id}`, roles: key.roles });
  }

  private async denyList(tenantId: string, subject: string): Promise<JwtRevocationRecord[]> {
    try {
      return await this.revocations.forSubject(tenantId, subject);
    } catch (error) {
      throw new TransientError('jwt revocation lookup failed', 'database.unavailable', { cause: error });
    }
  }

  private async lookup(keyHash: string): Promise<ApiKeyRecord | undefined> {
    try {
      return await this.apiKeys.findByHash(keyHash);
    } catch (error) {
      // Postgres down is not the client's fault: 503 + Retry-After, not 401 or 500.
      throw new TransientError('api key lookup failed', 'database.unavailable', { cause: error });
    }
  }
}

/**
 * The operator role comes only with an operator credential: a tenant's key or a token from an identity
 * provider a tenant may administer never carries it, whatever its claims say.
 */
function withoutOperator(principal: AuthenticatedPrincipal): AuthenticatedPrincipal {
  return principal.roles.includes('operator')
    ? { ...principal, roles: principal.roles.filter((r) => r !== 'operator') }
    : principal;
}

function tooMany(limited: Extract<LimitDecision, { ok: false }>): ProblemException {
  const what =
    limited.scope === 'source'
      ? 'Too many failed authentications from this address'
      : limited.scope === 'tenant'
        ? "This tenant's credentials together exceeded the tenant's request rate"
        : 'This credential exceeded its request rate';
  return new ProblemException(
    {
      type: PROBLEM_TYPES.rateLimited,
      title: 'Too many requests',
      status: 429,
      detail: `${what}; retry after ${limited.retryAfterSeconds} s.`,
      limit: limited.scope,
    },
    { 'Retry-After': String(limited.retryAfterSeconds) },
  );
}

function forbidden(detail: string): ProblemException {
  return new ProblemException({ type: PROBLEM_TYPES.forbidden, title: 'Forbidden', status: 403, detail });
}

function unauthenticated(detail: string): ProblemException {
  return new ProblemException(
    { type: PROBLEM_TYPES.unauthenticated, title: 'Unauthenticated', status: 401, detail },
    CHALLENGE,
  );
}
