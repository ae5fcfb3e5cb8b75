import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { hashApiKey, type ApiKeyRecord, type ApiKeyRepository } from '@ratchet/adapters';
import { TransientError } from '@ratchet/domain';
import { ProblemException } from '../http/problem-details';
import { ApiKeyGuard } from './api-key.guard';
import type { AuthenticatedRequest } from './principal';
import { Public, RequireRoles } from './roles.decorator';

class Routes {
  @RequireRoles('runner')
  run(): void {}
  @Public()
  open(): void {}
  any(): void {}
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

function guardWith(findByHash: (hash: string) => Promise<ApiKeyRecord | undefined>): ApiKeyGuard {
  return new ApiKeyGuard(new Reflector(), { findByHash } as unknown as ApiKeyRepository);
}

const statusOf = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e);
  return error instanceof ProblemException ? error.problem.status : error;
};

describe('ApiKeyGuard', () => {
  const guard = guardWith(async (hash) => (hash === hashApiKey('good') ? key : undefined));

  it('lets public routes through without a key', async () => {
    await expect(guard.canActivate(contextFor('open', {}).ctx)).resolves.toBe(true);
  });

  it('answers 401 without a key and with an unknown key', async () => {
    expect(await statusOf(guard.canActivate(contextFor('any', {}).ctx))).toBe(401);
    expect(await statusOf(guard.canActivate(contextFor('any', { authorization: 'Bearer bad' }).ctx))).toBe(401);
  });

  it('attaches the principal from the key, tenant included', async () => {
    const { ctx, req } = contextFor('any', { 'x-api-key': 'good' });
    await expect(guard.canActivate(ctx)).resolves.toBe(true);
    expect(req.principal).toEqual({ tenantId: 'acme', principalId: 'key:k1', roles: ['viewer'] });
  });

  it('answers 403 when a required role is missing', async () => {
    expect(await statusOf(guard.canActivate(contextFor('run', { authorization: 'Bearer good' }).ctx))).toBe(403);
  });

  it('turns a failing lookup into a TransientError (503), not a 401', async () => {
    const failing = guardWith(() => Promise.reject(new Error('ECONNREFUSED')));
    await expect(failing.canActivate(contextFor('any', { authorization: 'Bearer good' }).ctx)).rejects.toBeInstanceOf(
      TransientError,
    );
  });
});
