import { z } from 'zod';
import { MemoryNamespacePrefix } from '@ratchet/contracts';
import type { RetentionPolicy } from '@ratchet/domain';

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };
const RULE = /^([^=\s]+)\s*=\s*(\d+)([smhd])$/;

/**
 * MEMORY_RETENTION: `<namespace prefix>=<duration>` rules, comma-separated, e.g. `sessions/=7d,scratch/=12h`
 * (units s, m, h, d); `none` for no rule. Parsed once at boot so a typo stops the service.
 */
export function envRetention() {
  const expected =
    'expected "none" or comma-separated <namespace prefix>=<duration> rules, e.g. sessions/=7d,scratch/=12h (units s, m, h, d)';
  return z.string({ error: expected }).transform((raw, ctx): RetentionPolicy => {
    if (raw.trim().toLowerCase() === 'none') return {};
    const policy: Record<string, number> = {};
    for (const part of raw.split(',')) {
      const m = RULE.exec(part.trim());
      const [prefix, amount, unit] = m ? [m[1], m[2], m[3]] : [];
      const seconds = Number(amount) * (UNIT_SECONDS[unit ?? ''] ?? NaN);
      if (!prefix || !MemoryNamespacePrefix.safeParse(prefix).success || !(seconds > 0)) {
        ctx.addIssue({ code: 'custom', message: expected });
        return z.NEVER;
      }
      policy[prefix] = seconds;
    }
    return policy;
  });
}
