import { hashApiKey, type ApiKeyRepository } from '@ratchet/adapters';
import { BOOTSTRAP_KEY_ROLES } from '../gateway.config';

export type BootstrapKeyOutcome =
  | { status: 'created'; keyId: string }
  | { status: 'exists'; keyId: string; tenantId: string; roles: string[] }
  /** The key's hash is stored but the key no longer works: an operator revoked it or it expired. */
  | { status: 'disabled' };

const BOOTSTRAP_KEY_NAME = 'bootstrap (GATEWAY_BOOTSTRAP_API_KEY)';

/**
 * Makes the configured bootstrap key usable for `tenantId`, once: every restart (and every replica
 * starting at the same moment) finds the key by its hash instead of adding another. A key that was
 * revoked stays revoked; restarting must not resurrect a credential an operator disabled. An existing
 * key is never changed, so the caller reports a tenant or role mismatch instead of silently fixing it.
 */
export async function ensureBootstrapKey(
  keys: ApiKeyRepository,
  secret: string,
  tenantId: string,
): Promise<BootstrapKeyOutcome> {
  const keyHash = hashApiKey(secret);
  const existing = await keys.findByHash(keyHash);
  if (existing) return { status: 'exists', keyId: existing.id, tenantId: existing.tenantId, roles: existing.roles };
  try {
    const { key } = await keys.create({ tenantId, name: BOOTSTRAP_KEY_NAME, roles: [...BOOTSTRAP_KEY_ROLES], secret });
    return { status: 'created', keyId: key.id };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // key_hash is unique: either another replica just created it, or it exists but is revoked/expired.
    const raced = await keys.findByHash(keyHash);
    return raced
      ? { status: 'exists', keyId: raced.id, tenantId: raced.tenantId, roles: raced.roles }
      : { status: 'disabled' };
  }
}

/** Postgres 23505, as MikroORM's UniqueConstraintViolationException (which copies the driver's code). */
function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown } | undefined;
  return e?.code === '23505' || e?.name === 'UniqueConstraintViolationException';
}
