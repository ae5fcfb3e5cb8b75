import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { EventType } from '@ratchet/contracts';
import type { DataKey, KeyAbsence } from '@ratchet/domain';

/**
 * Where content sits in what a thread stores, and how a piece of it is sealed (ADR 0034). Only content is
 * sealed — messages, tool arguments and results, outputs — so a log read without keys keeps its shape:
 * types, versions, ids, steps, tool names, statuses, timings, and the run metadata the caller labels runs
 * with (redacted where it enters, and what threads and runs are listed by). A sealed value is
 * `{ "enc": 1, "kid": …, "iv": …, "ct": … }`: AES-256-GCM over the value's JSON, with its place (the event
 * id or the message's number, and the field) as associated data, so a ciphertext cannot be moved.
 */

export interface Sealed {
  enc: 1;
  kid: string;
  iv: string;
  ct: string;
}

/** A path into a value: field names, `*` for every element of an array. */
type Path = readonly string[];

interface ContentField {
  path: Path;
  /** What a reader is shown in its place when it cannot be opened (its key was destroyed). */
  erased: unknown;
}

const ERASED = '[erased]';

const field = (path: string, erased: unknown): ContentField => ({ path: path.split('.'), erased });

/** The content of each event type that has any; every other event is shape only. */
export const EVENT_CONTENT: Readonly<Partial<Record<EventType, readonly ContentField[]>>> = {
  'run.requested': [field('input', [{ role: 'user', content: ERASED }])],
  'model.responded': [field('content', ERASED), field('toolCalls.*.args', {})],
  'tool.requested': [field('args', {})],
  'tool.completed': [field('result', ERASED)],
  'run.completed': [field('output', ERASED)],
};

/** The content of a conversation's message (`thread_messages`): its text and its tool calls' arguments. */
export const MESSAGE_CONTENT: readonly ContentField[] = [field('content', ERASED), field('toolCalls.*.args', {})];

export function isSealed(value: unknown): value is Sealed {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v['enc'] === 1 && typeof v['kid'] === 'string' && typeof v['iv'] === 'string' && typeof v['ct'] === 'string';
}

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

/**
 * Applies `fn` to every value at the fields' paths in `root` and returns a copy with the results (the
 * input is never changed); a missing field is left missing.
 */
function mapFields(
  root: unknown,
  fields: readonly ContentField[],
  fn: (value: unknown, where: string, f: ContentField) => unknown,
): unknown {
  let out = root;
  for (const f of fields) out = mapAt(out, f.path, f.path.join('.'), (v, where) => fn(v, where, f));
  return out;
}

function mapAt(node: unknown, path: Path, where: string, fn: (value: unknown, where: string) => unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return fn(node, where);
  if (head === '*') {
    if (!Array.isArray(node)) return node;
    return node.map((item, i) => mapAt(item, rest, `${where}#${i}`, fn));
  }
  if (typeof node !== 'object' || node === null || Array.isArray(node) || !(head in node)) return node;
  const record = node as Record<string, unknown>;
  return { ...record, [head]: mapAt(record[head], rest, where, fn) };
}

/** The key ids the sealed values in `root` (at the fields' paths) are sealed with. */
export function kidsIn(root: unknown, fields: readonly ContentField[], into: Set<string>): void {
  mapFields(root, fields, (v) => {
    if (isSealed(v)) into.add(v.kid);
    return v;
  });
}

/** The content at the fields' paths sealed with `key`; `place` names what it belongs to (an event id…). */
export function sealFields(root: unknown, fields: readonly ContentField[], key: DataKey, place: string): unknown {
  return mapFields(root, fields, (v, where) => (isSealed(v) ? v : sealValue(v, key, `${place}/${where}`)));
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
  return mapFields(root, fields, (v, where, f) => {
    if (!isSealed(v)) return v;
    const key = keys.get(v.kid) ?? 'unknown';
    if (typeof key === 'string') {
      if (onSealed === 'throw') throw new SealedFieldError(v.kid, key);
      return f.erased;
    }
    return openValue(v, key, `${place}/${where}`);
  });
}
