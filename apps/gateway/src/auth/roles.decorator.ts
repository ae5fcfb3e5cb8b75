import { SetMetadata } from '@nestjs/common';
import type { Role } from './principal';

export const ROLES_KEY = 'ratchet:roles';
export const PUBLIC_KEY = 'ratchet:public';

/** The caller must hold every listed role (403 otherwise). */
export const RequireRoles = (...roles: Role[]) => SetMetadata(ROLES_KEY, roles);

/**
 * Opts a route out of authentication (health probes). The guard is global, so forgetting a decorator
 * on a new route leaves it protected, not open.
 */
export const Public = () => SetMetadata(PUBLIC_KEY, true);
