/** Median, p99 and friends of a list of durations (ms). */
export function summarize(samples: number[]): { n: number; median: number; p99: number; min: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))] ?? NaN;
  return { n: s.length, median: at(0.5), p99: at(0.99), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

export function table(rows: Array<Record<string, string | number>>): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0] ?? {});
  const cell = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v);
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c] ?? '').length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ');
  return [
    line(cols),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(cols.map((c) => cell(r[c] ?? '')))),
  ].join('\n');
}
