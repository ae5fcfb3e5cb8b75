import { RE2JS } from 're2js';

/**
 * A regular expression written by a tenant (an agent definition's `when.user`), matched by RE2's
 * linear-time engine, never by the backtracking one: `(a+)+$` on a long input costs what its length
 * costs, not seconds per character. RE2 syntax: no backreferences and no lookahead, which is refused
 * when the agent is registered, with the pattern named. `(?i)` and named groups `(?<name>…)` work.
 */
export interface UserPattern {
  readonly source: string;
  /** The named groups of the first match, or undefined when there is none. */
  match(text: string): Record<string, string> | undefined;
}

export class UserPatternError extends Error {
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`pattern ${JSON.stringify(pattern)} is not a supported regular expression (${reason})`);
    this.name = 'UserPatternError';
  }
}

const cache = new Map<string, UserPattern>();
const CACHE_LIMIT = 1000;

export function compileUserPattern(source: string): UserPattern {
  const cached = cache.get(source);
  if (cached) return cached;
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '');
    throw new UserPatternError(source, reason);
  }
  const names = Object.keys(re.namedGroups());
  const pattern: UserPattern = {
    source,
    match(text) {
      const m = re.matcher(text);
      if (!m.find()) return undefined;
      const groups: Record<string, string> = {};
      for (const name of names) {
        const value = m.group(name);
        if (value !== null && value !== undefined) groups[name] = value;
      }
      return groups;
    },
  };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(source, pattern);
  return pattern;
}
