import type { Json } from '@ratchet/contracts';
import { utf8Length } from './memory.limits';

/**
 * The default searchable text of a value: object keys and scalar values in document order, separated
 * by spaces, so `{ theme: 'dark' }` is found by "theme" and by "dark". Nulls add nothing.
 */
export function flattenValue(value: Json): string {
  const parts: string[] = [];
  const walk = (v: Json): void => {
    if (v === null) return;
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object')
      for (const [k, inner] of Object.entries(v)) {
        parts.push(k);
        walk(inner);
      }
    else parts.push(String(v));
  };
  walk(value);
  // Postgres text cannot hold U+0000 (JSON can): the searchable copy drops it.
  return parts.join(' ').replaceAll('\u0000', '');
}

/** The longest prefix of `s` within `maxBytes` of UTF-8, never splitting a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (utf8Length(s) <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const size = utf8Length(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return s.slice(0, end);
}
