import { SubjectToken } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { AuthenticatedPrincipal } from './principal';

export interface JwtSettings {
  jwksUrl: string;
  issuer: string;
  audience: string;
  algorithms: readonly string[];
}

/** A token that is not acceptable; the message is safe to show the client. */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
}

/** `header.payload.signature` in base64url: what tells a JWT from an API key (`rk_…`, no dots). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/**
 * Verifies JWT bearer tokens against the issuer's JWKS: signature with a pinned algorithm (never
 * `none`, never one the token picks), `iss`, `aud`, `exp` (and `nbf`), then maps the claims:
 * `tenant` → tenant, `roles` → roles, `sub` → principal `jwt:<sub>` (with `iat` and `jti` kept for the
 * deny list, ADR 0035). Keys are fetched and cached by
 * jose (refetched when a token names an unknown `kid`, at most every 30 s).
 */
export class JwtVerifier {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly settings: JwtSettings) {
    this.jwks = createRemoteJWKSet(new URL(settings.jwksUrl), { timeoutDuration: 5_000, cooldownDuration: 30_000 });
  }

  async verify(token: string): Promise<AuthenticatedPrincipal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: [...this.settings.algorithms],
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      }));
    } catch (error) {
      throw classify(error);
    }
    const tenant = payload['tenant'];
    if (typeof tenant !== 'string' || !SubjectToken.safeParse(tenant).success)
      throw new InvalidTokenError('The token has no valid "tenant" claim.');
    const roles = rolesOf(payload['roles']);
    if (!roles) throw new InvalidTokenError('The "roles" claim must be an array of strings.');
    const sub = payload.sub ?? '';
    if (sub === '' || sub.length > 250) throw new InvalidTokenError('The token has no valid "sub" claim.');
    const jti = typeof payload.jti === 'string' && payload.jti !== '' ? payload.jti : undefined;
    const issuedAt = typeof payload.iat === 'number' ? new Date(payload.iat * 1000).toISOString() : undefined;
    return { tenantId: tenant, principalId: `jwt:${sub}`, roles, token: { subject: sub, issuedAt, jti } };
  }
}

function rolesOf(value: unknown): string[] | undefined {
  if (value === undefined) return [];
  if (typeof value === 'string') return value.split(' ').filter((r) => r !== '');
  if (Array.isArray(value) && value.every((r) => typeof r === 'string')) return value.slice(0, 32);
  return undefined;
}

/** A bad token is the client's problem (401); an unreachable or broken JWKS is ours (503). */
function classify(error: unknown): Error {
  if (error instanceof errors.JWTExpired) return new InvalidTokenError('The token has expired.');
  if (error instanceof errors.JWTClaimValidationFailed)
    return new InvalidTokenError(`The token's "${error.claim}" claim is not acceptable.`);
  if (error instanceof errors.JOSEAlgNotAllowed)
    return new InvalidTokenError('The token is signed with an algorithm that is not allowed.');
  if (
    error instanceof errors.JWSSignatureVerificationFailed ||
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys ||
    error instanceof errors.JOSENotSupported
  )
    return new InvalidTokenError('The token is not valid.');
  return new TransientError('jwks unavailable', 'jwks.unavailable', { cause: error });
}
