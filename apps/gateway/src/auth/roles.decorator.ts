import { SetMetadata } from '@nestjs/common';
import type { Role } from './principal';

export const ROLES_KEY = 'ratchet:roles';
export const ANY_ROLE_KEY = 'ratchet:any-role';
export const PUBLIC_KEY = 'ratchet:public';
export const OPERATOR_KEY = 'ratchet:operator';

/** The caller must hold every listed role (403 otherwise). */
export const RequireRoles = (...roles: Role[]) => SetMetadata(ROLES_KEY, roles);

/** The caller must hold at least one of the listed roles (403 otherwise). */
export const RequireAnyRole = (...roles: Role[]) => SetMetadata(ANY_ROLE_KEY, roles);

/** Who may read a tenant's threads, runs, events, memory and agents: any role of the tenant. */
export const READ_ROLES: Role[] = ['viewer', 'runner', 'approver', 'admin'];
/** Who may write memory items (the memory service then checks ownership). */
export const WRITE_ROLES: Role[] = ['runner', 'admin'];

/**
 * A deployment-level route: only an operator credential may call it, and an operator credential may
 * call nothing else (it acts for no tenant). A tenant's admin never reaches it.
 */
export const OperatorOnly = () => SetMetadata(OPERATOR_KEY, true);

/**
 * Opts a route out of authentication (health probes). The guard is global, so forgetting a decorator
 * on a new route leaves it protected, not open.
 */
export const Public = () => SetMetadata(PUBLIC_KEY, true);
