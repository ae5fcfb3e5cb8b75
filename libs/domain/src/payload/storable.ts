/**
 * Whether a parsed JSON value can be stored and carried as it is: Postgres `text`/`jsonb` cannot hold
 * U+0000, a lone UTF-16 surrogate has no UTF-8 form (it becomes U+FFFD on the way, so what is stored
 * is not what was sent), and very deep nesting costs every recursive reader (serializers, projections,
 * canonical JSON) stack and time. Checked where a request enters, so such a request is refused with
 * the field named instead of accepted and then failing on every delivery.
 */
export const MAX_JSON_DEPTH = 64;

export type UnstorableProblem = 'nul' | 'lone-surrogate' | 'too-deep';

export interface Unstorable {
  /** JSON Pointer (RFC 6901) of the offending value or key, `''` for the root. */
  readonly pointer: string;
  readonly problem: UnstorableProblem;
  /** A sentence that names the field and the problem, for a problem document or a rejected outcome. */
  readonly message: string;
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with a text, if anything. */
export function textProblem(text: string): 'nul' | 'lone-surrogate' | undefined {
  if (text.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(text)) return 'lone-surrogate';
  return undefined;
}

/** The first value (or key) of `value` that cannot be stored, depth-first; undefined when all can. */
export function findUnstorable(value: unknown, maxDepth = MAX_JSON_DEPTH): Unstorable | undefined {
  // Iterative, so a hostile depth cannot overflow this check's own stack.
  const stack: { value: unknown; pointer: string; depth: number }[] = [{ value, pointer: '', depth: 0 }];
  while (stack.length > 0) {
    const { value: v, pointer, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return unstorable(pointer, problem, maxDepth);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) return unstorable(pointer, 'too-deep', maxDepth);
    const entries: [string, unknown][] = Array.isArray(v)
      ? v.map((item, i) => [String(i), item])
      : Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      const at = `${pointer}/${escapePointer(key)}`;
      if (!Array.isArray(v)) {
        const problem = textProblem(key);
        if (problem) return unstorable(at, problem, maxDepth, true);
      }
      stack.push({ value: item, pointer: at, depth: depth + 1 });
    }
  }
  return undefined;
}

function unstorable(pointer: string, problem: UnstorableProblem, maxDepth: number, key = false): Unstorable {
  const where = pointer === '' ? 'the body' : `${key ? 'the key of ' : ''}${pointer}`;
  const what =
    problem === 'nul'
      ? 'contains a NUL character (U+0000), which cannot be stored'
      : problem === 'lone-surrogate'
        ? 'contains a lone UTF-16 surrogate (not valid Unicode), which cannot be stored'
        : `is nested deeper than ${maxDepth} levels`;
  return { pointer, problem, message: `${where} ${what}` };
}

/** Printable form of a pointer: the offending characters are escaped, never echoed raw. */
function escapePointer(key: string): string {
  return key
    .replace(/~/g, '~0')
    .replace(/\//g, '~1')
    .replace(/[\u0000-\u001f\uD800-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A text Postgres can store that still shows what was there: NUL becomes the six characters `\u0000`
 * and a lone surrogate U+FFFD. For records of refused input (`failed_messages`), never for the input
 * itself, which is refused instead.
 */
export function storableText(text: string): string {
  return text.replace(/\u0000/g, '\\u0000').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
}
