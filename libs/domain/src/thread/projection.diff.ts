/**
 * Where two projections differ, as readable paths (`active.step: 2 ≠ 3`). Used to prove a stored
 * projection equals the fold of its log (`ratchet replay --verify`, the crash suites).
 */
export function diffProjections(stored: unknown, folded: unknown, path = '', out: string[] = [], limit = 50): string[] {
  if (out.length >= limit) return out;
  if (Object.is(stored, folded)) return out;
  const at = path || '(root)';
  if (typeof stored !== 'object' || typeof folded !== 'object' || stored === null || folded === null) {
    out.push(`${at}: stored ${show(stored)} ≠ replayed ${show(folded)}`);
    return out;
  }
  if (Array.isArray(stored) !== Array.isArray(folded)) {
    out.push(`${at}: stored ${show(stored)} ≠ replayed ${show(folded)}`);
    return out;
  }
  const a = stored as Record<string, unknown>;
  const b = folded as Record<string, unknown>;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of [...keys].sort()) {
    // JSON drops undefined: a key missing on one side and undefined on the other is no difference.
    if (a[k] === undefined && b[k] === undefined) continue;
    diffProjections(a[k], b[k], path ? `${path}.${k}` : k, out, limit);
  }
  return out;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
