import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed one-off callback URLs of waitpoints (ADR 0041): whoever holds the URL may complete that one
 * waitpoint, without a credential. The token is an HMAC-SHA256 over the tenant, the waitpoint id and its
 * expiry with a deployment key; nothing is stored (so nothing can leak from a table), and it is valid for
 * that waitpoint only. Keys rotate by id: the first key of `WAITPOINT_CALLBACK_KEYS` signs, every listed
 * key verifies, so a key is dropped once the longest waitpoint TTL has passed since the next one took over.
 *
 * Token: `<keyId>.<expiry, unix seconds>.<signature, base64url>`.
 */
export interface CallbackKey {
  id: string;
  secret: Buffer;
}

/** The smallest secret accepted, in bytes of its text: 32. */
export const MIN_CALLBACK_SECRET_LENGTH = 32;

/** `id:secret,id:secret` (first signs) → keys; a problem names the entry at fault, never a secret. */
export function parseCallbackKeys(spec: string): { ok: true; keys: CallbackKey[] } | { ok: false; problem: string } {
  const keys: CallbackKey[] = [];
  const entries = spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const [i, entry] of entries.entries()) {
    const at = entry.indexOf(':');
    const id = at > 0 ? entry.slice(0, at) : '';
    const secret = at > 0 ? entry.slice(at + 1) : '';
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id))
      return { ok: false, problem: `entry ${i + 1}: expected <id>:<secret>, the id letters, digits, "_" or "-"` };
    if (secret.length < MIN_CALLBACK_SECRET_LENGTH)
      return { ok: false, problem: `key ${id}: the secret must be at least ${MIN_CALLBACK_SECRET_LENGTH} characters` };
    if (keys.some((k) => k.id === id)) return { ok: false, problem: `key ${id} is listed twice` };
    keys.push({ id, secret: Buffer.from(secret, 'utf8') });
  }
  if (keys.length === 0) return { ok: false, problem: 'no key: expected <id>:<secret>[,<id>:<secret>…]' };
  return { ok: true, keys };
}

function signature(key: CallbackKey, tenantId: string, waitpointId: string, expSeconds: number): Buffer {
  return createHmac('sha256', key.secret)
    .update(`ratchet-waitpoint-callback\n${tenantId}\n${waitpointId}\n${expSeconds}`)
    .digest();
}

/** The token of a waitpoint's callback URL, signed with the first key. */
export function signCallback(
  keys: readonly CallbackKey[],
  tenantId: string,
  waitpointId: string,
  expiresAt: string,
): string {
  const key = keys[0];
  if (!key) throw new Error('no waitpoint callback key');
  const exp = Math.ceil(Date.parse(expiresAt) / 1000);
  return `${key.id}.${exp}.${signature(key, tenantId, waitpointId, exp).toString('base64url')}`;
}

/**
 * Whether `token` was signed for this tenant and waitpoint by one of `keys`. Expiry is not judged here:
 * the approvals service refuses an expired waitpoint by name, as it does for every other caller.
 */
export function verifyCallback(
  keys: readonly CallbackKey[],
  tenantId: string,
  waitpointId: string,
  token: string,
): boolean {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  const [keyId, exp, sig] = parts as [string, string, string];
  const key = keys.find((k) => k.id === keyId);
  if (!key || !/^\d{1,12}$/.test(exp) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
  const expected = signature(key, tenantId, waitpointId, Number(exp));
  const given = Buffer.from(sig, 'base64url');
  // Only the one canonical text of a signature: another spelling of the same bytes is a different token.
  if (given.length !== expected.length || given.toString('base64url') !== sig) return false;
  return timingSafeEqual(given, expected);
}
