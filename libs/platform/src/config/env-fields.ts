import { z } from 'zod';

/*
 * Builders for environment variables. Each accepts a string (the environment only holds strings;
 * empty values are treated as unset before parsing) and carries a message that says what was
 * expected. Chain `.default(...)` or `.optional()` at the use site.
 */

/** Letters, digits, `_` and `-`: safe as one NATS subject token and inside a JetStream name. */
const TOKEN = /^[A-Za-z0-9_-]+$/;

export function envString(expected = 'expected a non-empty string') {
  return z.string({ error: expected }).min(1, { error: expected });
}

/**
 * A JSON array of regular expressions (JavaScript syntax, no slashes), e.g. `["ACME-[0-9]{6}"]`; each
 * must compile. Parsed to RegExp objects (global, case-sensitive).
 */
export function envPatternList() {
  const expected = 'expected a JSON array of regular expressions, e.g. ["ACME-[0-9]{6}"]';
  return z.string({ error: expected }).transform((value, ctx) => {
    let list: unknown;
    try {
      list = JSON.parse(value);
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list) || !list.every((p) => typeof p === 'string' && p.length > 0)) {
      ctx.addIssue({ code: 'custom', message: expected });
      return z.NEVER;
    }
    const out: RegExp[] = [];
    for (const source of list as string[]) {
      try {
        out.push(new RegExp(source, 'g'));
      } catch (error) {
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(source)} is not a regular expression: ${(error as Error).message}`,
        });
        return z.NEVER;
      }
    }
    return out;
  });
}

/** A URL whose scheme is one of `protocols` (each with its trailing colon, e.g. `postgres:`). */
export function envUrl(protocols: readonly string[], expected: string) {
  return z.string({ error: expected }).refine((value) => isUrl(value, protocols), { error: expected });
}

/** A comma-separated list of URLs (e.g. NATS seed servers), each with one of `protocols`; kept as written. */
export function envUrlList(protocols: readonly string[], expected: string) {
  return z
    .string({ error: expected })
    .refine((value) => value.split(',').every((url) => isUrl(url.trim(), protocols)), { error: expected });
}

function isUrl(value: string, protocols: readonly string[]): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return protocols.includes(url.protocol) && url.host !== '';
}

/** A base-10 integer within `[min, max]`. */
export function envInt(options: { min?: number; max?: number; expected?: string } = {}) {
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = options;
  const expected =
    options.expected ??
    (options.min !== undefined && options.max !== undefined
      ? `expected an integer from ${min} to ${max}`
      : options.min !== undefined
        ? `expected an integer >= ${min}`
        : 'expected an integer');
  return z
    .string({ error: expected })
    .regex(/^-?\d+$/, { error: expected })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: expected }).max(max, { error: expected }));
}

export function envPort() {
  return envInt({ min: 1, max: 65535, expected: 'expected a TCP port (1-65535)' });
}

/** Milliseconds, a non-negative integer. */
export function envMillis() {
  return envInt({ min: 0, expected: 'expected a duration in milliseconds (an integer >= 0)' });
}

/** One of `values`, compared case-insensitively and returned as written in `values`. */
export function envEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const expected = `expected one of ${values.join(', ')}`;
  return z
    .string({ error: expected })
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(values, { error: expected }));
}

/** `true/false`, `1/0`, `yes/no`, `on/off`. */
export function envBoolean() {
  const expected = 'expected true or false';
  const truthy = ['true', '1', 'yes', 'on'];
  const falsy = ['false', '0', 'no', 'off'];
  return z
    .string({ error: expected })
    .refine((v) => [...truthy, ...falsy].includes(v.toLowerCase()), { error: expected })
    .transform((v) => truthy.includes(v.toLowerCase()));
}

/** A NATS subject token (no dots, wildcards or spaces), also valid inside JetStream stream names. */
export function envToken(expected = 'expected letters, digits, "_" or "-" only') {
  return z
    .string({ error: expected })
    .max(64, { error: `${expected} (at most 64)` })
    .regex(TOKEN, { error: expected });
}
