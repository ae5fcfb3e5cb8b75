import type { EventType } from './thread-events';

/**
 * Where content sits in what a thread stores and publishes, and what a sealed piece of it looks like
 * (docs/security.md#content-at-rest, ADR 0034). Where a deployment seals content at rest (a master key
 * file, RATCHET_KEY_FILE), these fields of the log's events — on the EVENTS stream too — and of the
 * conversation's messages are `{ "enc": 1, "kid": …, "iv": …, "ct": … }` (AES-256-GCM over the value's
 * JSON). Everything else stays clear: types, versions, ids, steps, tool names, statuses, timings, and
 * the run metadata the caller labels runs with (redacted where it enters, and what runs are listed by).
 */

export interface Sealed {
  enc: 1;
  kid: string;
  iv: string;
  ct: string;
}

/** A path into a value: field names, `*` for every element of an array. */
type Path = readonly string[];

export interface ContentField {
  path: Path;
  /** What a reader is shown in its place when it cannot be opened (its key was destroyed). */
  erased: unknown;
}

export const ERASED = '[erased]';

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

/**
 * Applies `fn` to every value at the fields' paths in `root` and returns a copy with the results (the
 * input is never changed); a missing field is left missing. `where` names the place (field, element).
 */
export function mapContent(
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

/**
 * An event as published, its sealed content shown as erased: for a reader without the deployment's keys
 * (it keeps the log's shape, and decodes as an event).
 */
export function withoutSealedContent<E extends { type: string; data: unknown }>(event: E): E {
  const fields = EVENT_CONTENT[event.type as EventType];
  if (!fields) return event;
  return { ...event, data: mapContent(event.data, fields, (v, _where, f) => (isSealed(v) ? f.erased : v)) };
}
