import type { IncomingHttpHeaders } from 'node:http';

export type PresentedCredential =
  | { kind: 'none' }
  | { kind: 'malformed'; reason: string }
  /** An API key, or (sent as a Bearer token, when JWTs are configured and it has the shape) a JWT. */
  | { kind: 'api-key'; secret: string; via: 'authorization' | 'x-api-key' };

/**
 * The credential a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`. Pure, so the
 * header rules are tested without HTTP. A request carrying both must agree, so a proxy that injects
 * one cannot be silently overridden by the other.
 */
export function presentedCredential(headers: IncomingHttpHeaders): PresentedCredential {
  const authorization = single(headers.authorization);
  const apiKeyHeader = single(headers['x-api-key'])?.trim();
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(authorization);
    if (!match || match[1]!.toLowerCase() !== 'bearer') {
      return { kind: 'malformed', reason: 'the Authorization header must be "Bearer <credential>"' };
    }
    bearer = match[2]!;
  }
  if (bearer !== undefined && apiKeyHeader !== undefined && apiKeyHeader !== '' && bearer !== apiKeyHeader) {
    return { kind: 'malformed', reason: 'Authorization and x-api-key carry different keys' };
  }
  const secret = bearer ?? apiKeyHeader;
  if (secret === undefined || secret === '') return { kind: 'none' };
  // Keys are short ASCII tokens; anything huge is not a key and is not worth hashing.
  // JWTs may be a few KB; anything larger is neither.
  if (secret.length > 8192) return { kind: 'malformed', reason: 'the credential is too long' };
  return { kind: 'api-key', secret, via: bearer !== undefined ? 'authorization' : 'x-api-key' };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
