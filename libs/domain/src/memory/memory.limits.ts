import type { Json } from '@ratchet/contracts';
import type { MemoryFailureReply } from '@ratchet/contracts';
import { memoryFailure } from './memory.errors';

/** Byte limits (UTF-8) of one item; configuration of the service, checked before anything is stored. */
export interface MemoryLimits {
  /** The value as JSON. */
  maxValueBytes: number;
  /** The searchable text when the writer gives it (a derived text is truncated instead). */
  maxTextBytes: number;
  maxKeyBytes: number;
}

export const DEFAULT_MEMORY_LIMITS: MemoryLimits = {
  maxValueBytes: 64 * 1024,
  maxTextBytes: 16 * 1024,
  maxKeyBytes: 256,
};

/** UTF-8 length without an encoder: the domain has no runtime APIs. Lone surrogates count 3 (as U+FFFD). */
export function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export interface SizedInput {
  key: string;
  value: Json;
  text?: string | undefined;
}

/** The first limit the input breaks, named by field and limit, or undefined. */
export function checkLimits(input: SizedInput, limits: MemoryLimits): MemoryFailureReply | undefined {
  const checks: [field: string, bytes: number, limit: number][] = [
    ['key', utf8Length(input.key), limits.maxKeyBytes],
    ['value', utf8Length(JSON.stringify(input.value)), limits.maxValueBytes],
    ['text', input.text === undefined ? 0 : utf8Length(input.text), limits.maxTextBytes],
  ];
  for (const [field, bytes, limit] of checks) {
    if (bytes > limit)
      return memoryFailure('too_large', `${field} is ${bytes} bytes; the limit is ${limit} bytes`, { field, limit });
  }
  return undefined;
}
