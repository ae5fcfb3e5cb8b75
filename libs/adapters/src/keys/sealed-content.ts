import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { isSealed, mapContent, type ContentField, type Sealed } from '@ratchet/contracts';
import type { DataKey, KeyAbsence } from '@ratchet/domain';

/**
 * How a piece of a thread's content is sealed and opened (ADR 0034): AES-256-GCM over the value's JSON,
 * with the key id and its place (the event id or the message's number, and the field) as associated
 * data, so a ciphertext cannot be moved. Which fields are content is the contract's
 * (`EVENT_CONTENT`, `MESSAGE_CONTENT` in @ratchet/contracts).
 */

export function sealValue(value: unknown, key: DataKey, place: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(`${key.kid}/${place}`));
  const ct = Buffer.concat([
    cipher.update(JSON.stringify(value) ?? 'null', 'utf8'),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
  return { enc: 1, kid: key.kid, iv: iv.toString('base64'), ct: ct.toString('base64') };
}

/** Opens a sealed value; throws when the ciphertext was altered or moved (authentication fails). */
export function openValue(sealed: Sealed, key: DataKey, place: string): unknown {
  const ct = Buffer.from(sealed.ct, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(Buffer.from(`${sealed.kid}/${place}`));
  decipher.setAuthTag(ct.subarray(ct.length - 16));
  const clear = Buffer.concat([decipher.update(ct.subarray(0, ct.length - 16)), decipher.final()]);
  return JSON.parse(clear.toString('utf8'));
}

/** The key ids the sealed values in `root` (at the fields' paths) are sealed with. */
export function kidsIn(root: unknown, fields: readonly ContentField[], into: Set<string>): void {
  mapContent(root, fields, (v) => {
    if (isSealed(v)) into.add(v.kid);
    return v;
  });
}

/** The content at the fields' paths sealed with `key`; `place` names what it belongs to (an event id…). */
export function sealFields(root: unknown, fields: readonly ContentField[], key: DataKey, place: string): unknown {
  return mapContent(root, fields, (v, where) => (isSealed(v) ? v : sealValue(v, key, `${place}/${where}`)));
}

/** How a reader that cannot open a value is served: `erased` shows the field's placeholder, `throw` refuses. */
export type OnSealed = 'erased' | 'throw';

/** Thrown by `openFields` with `throw`: which key did not open, and why. */
export class SealedFieldError extends Error {
  constructor(
    readonly kid: string,
    readonly absence: KeyAbsence,
  ) {
    super(`sealed with key ${kid} (${absence})`);
  }
}

/** The content at the fields' paths opened with `keys` (clear values are left as they are). */
export function openFields(
  root: unknown,
  fields: readonly ContentField[],
  keys: ReadonlyMap<string, DataKey | KeyAbsence>,
  place: string,
  onSealed: OnSealed,
): unknown {
  return mapContent(root, fields, (v, where, f) => {
    if (!isSealed(v)) return v;
    const key = keys.get(v.kid) ?? 'unknown';
    if (typeof key === 'string') {
      if (onSealed === 'throw') throw new SealedFieldError(v.kid, key);
      return f.erased;
    }
    return openValue(v, key, `${place}/${where}`);
  });
}
