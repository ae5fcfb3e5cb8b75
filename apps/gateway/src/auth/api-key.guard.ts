import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { hashApiKey, type ApiKeyRecord, type ApiKeyRepository } from '@ratchet/adapters';
import { TransientError } from '@ratchet/domain';
import { API_KEYS } from '../gateway.tokens';
import { PROBLEM_TYPES, ProblemException } from '../http/problem-details';
import { presentedCredential } from './credentials';
import type { AuthenticatedPrincipal, AuthenticatedRequest, Role } from './principal';
import { PUBLIC_KEY, ROLES_KEY } from './roles.decorator';

/** RFC 6750 §3: a 401 names the scheme the client should use. */
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="ratchet"' };

/**
 * Authenticates every route that is not @Public() by API key, then checks the roles the route
 * requires. Only the SHA-256 of the presented key is looked up; revoked and expired keys do not match.
 * Unknown, revoked and expired keys get the same answer, so the response does not reveal which.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(API_KEYS) private readonly apiKeys: ApiKeyRepository,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)) return true;

    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const credential = presentedCredential(req.headers);
    if (credential.kind === 'none')
      throw unauthenticated('Send an API key as "Authorization: Bearer <key>" or "x-api-key".');
    if (credential.kind === 'malformed') throw unauthenticated(`Malformed credentials: ${credential.reason}.`);

    const key = await this.lookup(hashApiKey(credential.secret));
    if (!key) throw unauthenticated('The API key is not valid.');
    const principal: AuthenticatedPrincipal = {
      tenantId: key.tenantId,
      principalId: `key:${key.id}`,
      roles: key.roles,
    };
    req.principal = principal;

    const required = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, targets) ?? [];
    const missing = required.filter((role) => !principal.roles.includes(role));
    if (missing.length > 0) {
      throw new ProblemException({
        type: PROBLEM_TYPES.forbidden,
        title: 'Forbidden',
        status: 403,
        detail: `This operation requires the role(s): ${missing.join(', ')}.`,
      });
    }
    return true;
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

function unauthenticated(detail: string): ProblemException {
  return new ProblemException(
    { type: PROBLEM_TYPES.unauthenticated, title: 'Unauthenticated', status: 401, detail },
    CHALLENGE,
  );
}
