/**
 * Named crash points for the crash suites: `RATCHET_FAILPOINTS=orchestrator.after-commit@3` makes the
 * process SIGKILL itself the third time it passes that point — a real kill at an exact line, which a
 * kill from outside cannot aim at. Unset (production), `failpoint()` is one map lookup.
 */
const armed = parse(process.env['RATCHET_FAILPOINTS'] ?? '');
const hits = new Map<string, number>();

function parse(spec: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, nth] = part.split('@');
    if (name) out.set(name, nth ? Number(nth) : 1);
  }
  return out;
}

export function failpoint(name: string): void {
  const at = armed.get(name);
  if (at === undefined) return;
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (n === at) {
    process.stderr.write(`failpoint ${name}@${n}: SIGKILL\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
