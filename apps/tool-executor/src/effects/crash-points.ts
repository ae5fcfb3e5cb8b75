import { failpoint } from '@ratchet/platform';

/**
 * The executor's failpoints for the crash matrix (docs/tools.md):
 * - `tools.before-started`: the command arrived, nothing is in the ledger yet;
 * - `tools.after-started`: the ledger says `started` (a claimed, not pure, call), the tool has not acted;
 * - `tools.after-deferred-claim`: an idempotent call still acting after TOOL_CLAIM_AFTER_MS has just
 *   committed its `started` row (ADR 0043); the tool goes on acting;
 * - `tools.after-effect`: the tool acted, its outcome is not recorded (the ledger says `started`; for a
 *   pure tool, which records nothing before it acts, and an idempotent one that ended before its claim
 *   was due, the ledger holds nothing for the call);
 * - `tools.after-outcome`: outcome and result message are committed, nothing is published yet.
 *
 * `RATCHET_FAILPOINT_GATE=n[:maxWaitMs]` (crash suites only, and only for an armed failpoint) parks
 * calls at the point until `n` of them are there (or `maxWaitMs`, default 10000, passed since the first
 * arrived), then lets them hit it: the first hit SIGKILLs the process with every parked call exactly
 * at that line, so one kill puts a whole batch of runs into the same crash case.
 * Unset, a crash point is one map lookup.
 */
const armed = new Set(
  (process.env['RATCHET_FAILPOINTS'] ?? '')
    .split(',')
    .map((s) => s.trim().split('@')[0])
    .filter((s): s is string => !!s),
);
const gate = parseGate(process.env['RATCHET_FAILPOINT_GATE']);
const parked = new Map<string, { waiters: (() => void)[]; timer: NodeJS.Timeout }>();

function parseGate(spec: string | undefined): { size: number; maxWaitMs: number } | undefined {
  if (!spec) return undefined;
  const [size, wait] = spec.split(':').map(Number);
  if (!size || size < 1) return undefined;
  return { size, maxWaitMs: wait && wait > 0 ? wait : 10_000 };
}

export async function crashPoint(name: string): Promise<void> {
  if (!armed.has(name)) return;
  if (gate && gate.size > 1) {
    await new Promise<void>((resolve) => {
      let entry = parked.get(name);
      if (!entry) {
        entry = { waiters: [], timer: setTimeout(() => release(name), gate.maxWaitMs) };
        parked.set(name, entry);
      }
      entry.waiters.push(resolve);
      if (entry.waiters.length >= gate.size) release(name);
    });
  }
  failpoint(name);
}

function release(name: string): void {
  const entry = parked.get(name);
  if (!entry) return;
  clearTimeout(entry.timer);
  parked.delete(name);
  // Synchronously, in arrival order: the first one reaching failpoint() kills the process.
  for (const w of entry.waiters) w();
}
