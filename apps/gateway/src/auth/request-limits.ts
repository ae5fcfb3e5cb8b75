import { RateLimiter } from './rate-limiter';

export interface RequestLimitsConfig {
  /** Requests per minute per principal of a tenant (API key, JWT subject); 0 = off. */
  perPrincipal: number;
  /** Requests per minute per tenant, all its principals together; 0 = off. */
  perTenant: number;
  /** Failed authentications per minute per source address before every attempt from it waits; 0 = off. */
  authFailuresPerSource: number;
}

export type LimitScope = 'principal' | 'tenant' | 'source';
export type LimitDecision = { ok: true } | { ok: false; scope: LimitScope; retryAfterSeconds: number };

/**
 * The gateway's rate limits, as token buckets in this replica's memory: one per principal (keyed by
 * tenant and principal, so two tenants' identity providers cannot share a bucket by reusing a subject),
 * one per tenant (so a tenant with many keys cannot crowd out the others), and one of failed
 * authentications per source address (so guessing keys is slow, and a blocked source is refused before
 * its credential is even looked up).
 */
export class RequestLimits {
  private readonly principals: RateLimiter;
  private readonly tenants: RateLimiter;
  private readonly failures: RateLimiter;

  constructor(config: RequestLimitsConfig, now: () => number = () => Date.now()) {
    this.principals = new RateLimiter(config.perPrincipal, now);
    this.tenants = new RateLimiter(config.perTenant, now);
    this.failures = new RateLimiter(config.authFailuresPerSource, now);
  }

  /** Before a credential is checked: a source that used up its failed attempts waits. */
  beforeAuthentication(source: string): LimitDecision {
    return scoped(this.failures.check(source), 'source');
  }

  /** A credential from `source` was refused: one attempt fewer for it. */
  authenticationFailed(source: string): void {
    this.failures.take(source);
  }

  /** An authenticated request: takes from the principal's bucket, then from its tenant's. */
  authenticated(tenantId: string, principalId: string): LimitDecision {
    const principal = scoped(this.principals.take(JSON.stringify([tenantId, principalId])), 'principal');
    if (!principal.ok) return principal;
    return scoped(this.tenants.take(tenantId), 'tenant');
  }
}

function scoped(result: ReturnType<RateLimiter['take']>, scope: LimitScope): LimitDecision {
  return result.ok ? result : { ok: false, scope, retryAfterSeconds: result.retryAfterSeconds };
}
