import type { IncomingHttpHeaders } from 'node:http';

export type PresentedCredential =
  { kind: 'none' } | { kind: 'malformed'; reason: string } | { kind: 'api-key'; secret: string };

/**
 * The API key a request presents: `Authorization: Bearer <key>` or `x-api-key: <key>`. Pure, so the
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
      return { kind: 'malformed', reason: 'the Authorization header must be "Bearer <api key>"' };
    }
    bearer = match[2]!;
  }
  if (bearer !== undefined && apiKeyHeader !== undefined && apiKeyHeader !== '' && bearer !== apiKeyHeader) {
    return { kind: 'malformed', reason: 'Authorization and x-api-key carry different keys' };
  }
  const secret = bearer ?? apiKeyHeader;
  if (secret === undefined || secret === '') return { kind: 'none' };
  // Keys are short ASCII tokens; anything huge is not a key and is not worth hashing.
  if (secret.length > 512) return { kind: 'malformed', reason: 'the API key is too long' };
  return { kind: 'api-key', secret };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
