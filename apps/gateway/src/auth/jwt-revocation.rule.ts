/**
 * The JWT deny-list rules (ADR 0035), as plain functions over the entries of one tenant and subject.
 * An entry revokes a token when every condition it names holds: the subject always; the `jti`, when it
 * names one; "issued before", when it names a time (a token without `iat` counts as issued before).
 */

/** What a rule needs of a deny-list entry. */
export interface RevocationEntry {
  id: string;
  subject: string;
  jti: string | null;
  issuedBefore: string | null;
  createdAt: string;
}

/** What a verified token says about itself. */
export interface PresentedToken {
  subject: string;
  /** `iat`, as an RFC 3339 time; undefined when the token has none. */
  issuedAt?: string | undefined;
  jti?: string | undefined;
}

export type RevocationVerdict = { revoked: false } | { revoked: true; entryId: string; reason: string };

/** Is this token revoked? The auth guard asks on every JWT request. */
export function tokenRevocation(entries: readonly RevocationEntry[], token: PresentedToken): RevocationVerdict {
  for (const e of entries) {
    if (e.subject !== token.subject) continue;
    if (e.jti !== null && e.jti !== token.jti) continue;
    if (
      e.issuedBefore !== null &&
      token.issuedAt !== undefined &&
      !(Date.parse(token.issuedAt) < Date.parse(e.issuedBefore))
    )
      continue;
    return { revoked: true, entryId: e.id, reason: describe(e) };
  }
  return { revoked: false };
}

/**
 * Does the principal `jwt:<subject>` still stand for a run started at `runStartedAt`? Asked at approval
 * execution, where the token that started the run is no longer at hand. An entry for the whole subject
 * always revokes. A narrowed entry (a `jti`, "issued before") revokes a run started before the entry was
 * added — which token started it cannot be told, so a run in flight when its user's tokens were revoked
 * loses its approvals — and not a later run, whose token the guard checked against the entry already.
 * Without a start time, every entry of the subject revokes.
 */
export function principalRevocation(
  entries: readonly RevocationEntry[],
  subject: string,
  runStartedAt: string | undefined,
): RevocationVerdict {
  for (const e of entries) {
    if (e.subject !== subject) continue;
    const wholeSubject = e.jti === null && e.issuedBefore === null;
    if (!wholeSubject && runStartedAt !== undefined && !(Date.parse(runStartedAt) < Date.parse(e.createdAt))) continue;
    return { revoked: true, entryId: e.id, reason: describe(e) };
  }
  return { revoked: false };
}

function describe(e: RevocationEntry): string {
  const scope = [
    e.jti !== null ? `token ${e.jti}` : undefined,
    e.issuedBefore !== null ? `tokens issued before ${e.issuedBefore}` : undefined,
  ].filter((s) => s !== undefined);
  return `the JWT subject ${e.subject} was revoked${scope.length > 0 ? ` (${scope.join(', ')})` : ''} by entry ${e.id}`;
}
