import { InvalidArgumentError } from 'commander';

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90s`, `15m`, `2h`, `30d`, `1w` → milliseconds. */
export function parseDuration(value: string): number {
  const m = /^(\d+)([smhdw])$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('expected a duration like 90s, 15m, 2h, 30d or 1w');
  return Number(m[1]) * UNITS[m[2]!]!;
}

/** A duration ago (`2h`) or an absolute RFC 3339 time, as a Date relative to `now`. */
export function parseSince(value: string, now = Date.now()): Date {
  if (/^\d+[smhdw]$/.test(value.trim())) return new Date(now - parseDuration(value));
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new InvalidArgumentError('expected a duration (2h, 7d) or a time (2026-11-30T09:00:00Z)');
  return new Date(ms);
}

export function parsePositiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return Number(value);
}

export function parseNonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number >= 0');
  return Number(value);
}

export function parseVersion(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a version number >= 1');
  return Number(value);
}
