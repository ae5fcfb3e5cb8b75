import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { hashApiKey, type ApiKeyRecord, type ApiKeyRepository } from '@ratchet/adapters';
import { TransientError } from '@ratchet/domain';
import { ProblemException } from '@ratchet/http-edge';
import { AuthGuard } from './auth.guard';
import { InvalidTokenError, type JwtVerifier } from './jwt.verifier';
import type { AuthenticatedRequest } from './principal';
import { RequestLimits } from './request-limits';
import { OperatorOnly, Public, RequireAnyRole, RequireRoles } from './roles.decorator';

class Routes {
  @RequireRoles('runner')
  run(): void {}
  @RequireAnyRole('viewer', 'admin')
  read(): void {}
  @Public()
  open(): void {}
  any(): void {}
  @OperatorOnly()
  deployment(): void {}
}

const key: ApiKeyRecord = {
  id: 'k1',
  tenantId: 'acme',
  name: 'test',
  roles: ['viewer'],
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: null,
  revokedAt: null,
};
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln';

function contextFor(
  handler: keyof Routes,
  headers: Record<string, string>,
): { ctx: ExecutionContext; req: AuthenticatedRequest } {
  const req = { headers } as unknown as AuthenticatedRequest;
  const ctx = {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
  return { ctx, req };
}

function guardWith(
  findByHash: (hash: string) => Promise<ApiKeyRecord | undefined>,
  options: { jwt?: JwtVerifier | null; perMinute?: number; failures?: number } = {},
): AuthGuard {
  return new AuthGuard(
    new Reflector(),
    { findByHash } as unknown as ApiKeyRepository,
    options.jwt ?? null,
    new RequestLimits({
      perPrincipal: options.perMinute ?? 0,
      perTenant: 0,
      authFailuresPerSource: options.failures ?? 0,
    }),
    { forSubject: async () => [] },
  );
}

const problemOf = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e);
  return error instanceof ProblemException ? { status: error.problem.status, headers: error.headers } : error;
};
const statusOf = async (promise: Promise<unknown>) => ((await problemOf(promise)) as { status?: number }).status;

describe('AuthGuard', () => {
  const guard = guardWith(async (hash) => (hash === hashApiKey('good') ? key : undefined));

  it('lets public routes through without a credential', async () => {
    await expect(guard.canActivate(contextFor('open', {}).ctx)).resolves.toBe(true);
  });

  it('answers 401 without a credential and with an unknown key', async () => {
    expect(await statusOf(guard.canActivate(contextFor('any', {}).ctx))).toBe(401);
    expect(await statusOf(guard.canActivate(contextFor('any', { authorization: 'Bearer bad' }).ctx))).toBe(401);
  });

  it('attaches the principal from the key, tenant included', async () => {
    const { ctx, req } = contextFor('any', { 'x-api-key': 'good' });
    await expect(guard.canActivate(ctx)).resolves.toBe(true);
    expect(req.principal).toEqual({ tenantId: 'acme', principalId: 'key:k1', roles: ['viewer'] });
  });

  it('answers 403 when a required role is missing, and checks any-of roles', async () => {
    expect(await statusOf(guard.canActivate(contextFor('run', { authorization: 'Bearer good' }).ctx))).toBe(403);
    await expect(guard.canActivate(contextFor('read', { authorization: 'Bearer good' }).ctx)).resolves.toBe(true);
    const runnerOnly = guardWith(async () => ({ ...key, roles: ['runner'] }));
    expect(await statusOf(runnerOnly.canActivate(contextFor('read', { authorization: 'Bearer x' }).ctx))).toBe(403);
  });

  it('turns a failing lookup into a TransientError (503), not a 401', async () => {
    const failing = guardWith(() => Promise.reject(new Error('ECONNREFUSED')));
    await expect(failing.canActivate(contextFor('any', { authorization: 'Bearer good' }).ctx)).rejects.toBeInstanceOf(
      TransientError,
    );
  });

  it('verifies JWT-shaped bearer tokens with the verifier, and maps its refusal to 401', async () => {
    const verify = jest.fn(async (token: string) => {
      if (token !== JWT) throw new InvalidTokenError('The token has expired.');
      return { tenantId: 'globex', principalId: 'jwt:u', roles: ['runner'] };
    });
    const jwtGuard = guardWith(async () => undefined, { jwt: { verify } as unknown as JwtVerifier });
    const { ctx, req } = contextFor('run', { authorization: `Bearer ${JWT}` });
    await expect(jwtGuard.canActivate(ctx)).resolves.toBe(true);
    expect(req.principal).toEqual({ tenantId: 'globex', principalId: 'jwt:u', roles: ['runner'] });
    expect(await statusOf(jwtGuard.canActivate(contextFor('run', { authorization: `Bearer ${JWT}x` }).ctx))).toBe(401);
    // Without a verifier, a JWT is just an unknown API key.
    expect(await statusOf(guard.canActivate(contextFor('any', { authorization: `Bearer ${JWT}` }).ctx))).toBe(401);
  });

  it('takes an operator key on operator routes only; a tenant key or a JWT never carries the operator role', async () => {
    const operatorKey = { ...key, id: 'op', tenantId: '*', roles: ['operator'] };
    const claims = { ...key, roles: ['admin', 'operator'] };
    const keys = guardWith(async (hash) =>
      hash === hashApiKey('op') ? operatorKey : hash === hashApiKey('claims') ? claims : undefined,
    );
    const { ctx, req } = contextFor('deployment', { authorization: 'Bearer op' });
    await expect(keys.canActivate(ctx)).resolves.toBe(true);
    expect(req.principal).toEqual({ tenantId: '*', principalId: 'key:op', roles: ['operator'], operator: true });
    // An operator acts for no tenant: every tenant route refuses it.
    expect(await statusOf(keys.canActivate(contextFor('any', { authorization: 'Bearer op' }).ctx))).toBe(403);
    // A tenant key that lists the role, and a token that claims it, are tenant credentials without it.
    const claimed = contextFor('any', { authorization: 'Bearer claims' });
    await expect(keys.canActivate(claimed.ctx)).resolves.toBe(true);
    expect(claimed.req.principal?.roles).toEqual(['admin']);
    expect(await statusOf(keys.canActivate(contextFor('deployment', { authorization: 'Bearer claims' }).ctx))).toBe(
      403,
    );
    const verify = async () => ({ tenantId: 'globex', principalId: 'jwt:u', roles: ['admin', 'operator'] });
    const jwtGuard = guardWith(async () => undefined, { jwt: { verify } as unknown as JwtVerifier });
    expect(await statusOf(jwtGuard.canActivate(contextFor('deployment', { authorization: `Bearer ${JWT}` }).ctx))).toBe(
      403,
    );
    const jwt = contextFor('any', { authorization: `Bearer ${JWT}` });
    await expect(jwtGuard.canActivate(jwt.ctx)).resolves.toBe(true);
    expect(jwt.req.principal?.roles).toEqual(['admin']);
  });

  it('answers 429 with Retry-After once a credential exceeds its rate', async () => {
    const limited = guardWith(async () => key, { perMinute: 2 });
    const call = () => limited.canActivate(contextFor('any', { 'x-api-key': 'k' }).ctx);
    await call();
    await call();
    expect(await problemOf(call())).toEqual({ status: 429, headers: { 'Retry-After': '30' } });
  });

  it('answers 429 to a source address after repeated bad credentials, even before a good one is looked up', async () => {
    let lookups = 0;
    const guarded = guardWith(
      async (hash) => {
        lookups++;
        return hash === hashApiKey('good') ? key : undefined;
      },
      { failures: 2 },
    );
    const from = (address: string, secret: string) => {
      const { ctx, req } = contextFor('any', { 'x-api-key': secret });
      Object.assign(req, { socket: { remoteAddress: address } });
      return guarded.canActivate(ctx);
    };
    expect(await statusOf(from('10.0.0.9', 'guess-1'))).toBe(401);
    expect(await statusOf(from('10.0.0.9', 'guess-2'))).toBe(401);
    expect(await problemOf(from('10.0.0.9', 'good'))).toEqual({ status: 429, headers: { 'Retry-After': '30' } });
    expect(lookups).toBe(2);
    await expect(from('10.0.0.10', 'good')).resolves.toBe(true);
  });
});
