import { z } from 'zod';
import { ConfigError } from '../config';

/** What retention does to a finished thread that has been idle for longer than `idleMs`. */
export interface RetentionRule {
  action: 'compact' | 'drop';
  idleMs: number;
  /** As written, e.g. `30d`. */
  idle: string;
}

export interface RetentionPolicy {
  /** The rule for tenants not named; absent = leave them alone. */
  default?: RetentionRule;
  tenants: Record<string, RetentionRule>;
}

export const RETENTION_VARIABLE = 'RATCHET_RETENTION';
const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** An age as the policy writes it (`90m`, `12h`, `30d`, `4w`) in milliseconds; undefined if it is not one. */
export function parseAge(text: string): number | undefined {
  const m = /^(\d+)([mhdw])$/.exec(text.trim());
  return m ? Number(m[1]) * UNITS[m[2]!]! : undefined;
}
const EXPECTED =
  'expected comma-separated <tenant|default>=<compact|drop>:<age> entries, e.g. default=compact:30d,acme=drop:90d (age units m, h, d, w)';

const Entry = z
  .string()
  .trim()
  .regex(/^([A-Za-z0-9_-]+)=(compact|drop):(\d+)([mhdw])$/, 'bad entry')
  .transform((text) => {
    const m = /^([A-Za-z0-9_-]+)=(compact|drop):(\d+)([mhdw])$/.exec(text)!;
    const rule: RetentionRule = {
      action: m[2] as RetentionRule['action'],
      idleMs: Number(m[3]) * UNITS[m[4]!]!,
      idle: `${m[3]}${m[4]}`,
    };
    return { tenant: m[1]!, rule };
  });

const Policy = z
  .string()
  .transform((text) => text.split(',').filter((p) => p.trim() !== ''))
  .pipe(z.array(Entry).min(1, 'no entries'))
  .superRefine((entries, ctx) => {
    const seen = new Set<string>();
    for (const e of entries) {
      if (seen.has(e.tenant)) ctx.addIssue({ code: 'custom', message: `${e.tenant} is given twice` });
      seen.add(e.tenant);
    }
  });

/**
 * Parses `RATCHET_RETENTION` (`default=compact:30d,acme=drop:90d`). Throws ConfigError naming the
 * variable (exit 78) when it is missing or malformed.
 */
export function parseRetentionPolicy(value: string | undefined, source = 'ratchet retention'): RetentionPolicy {
  if (value === undefined || value.trim() === '') {
    throw new ConfigError(source, [{ variable: RETENTION_VARIABLE, expected: `required: ${EXPECTED}` }]);
  }
  const parsed = Policy.safeParse(value);
  if (!parsed.success) {
    const bad = value
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '' && !Entry.safeParse(p).success);
    const why = parsed.error.issues.find((i) => i.code === 'custom')?.message;
    throw new ConfigError(source, [
      {
        variable: RETENTION_VARIABLE,
        expected: why ? `${EXPECTED} (${why})` : EXPECTED,
        received: bad.length > 0 ? bad.map((b) => JSON.stringify(b)).join(', ') : JSON.stringify(value),
      },
    ]);
  }
  const policy: RetentionPolicy = { tenants: {} };
  for (const { tenant, rule } of parsed.data) {
    if (tenant === 'default') policy.default = rule;
    else policy.tenants[tenant] = rule;
  }
  return policy;
}

export function ruleFor(policy: RetentionPolicy, tenant: string): RetentionRule | undefined {
  return policy.tenants[tenant] ?? policy.default;
}
