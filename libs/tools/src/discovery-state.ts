import type { OfferedTool, ToolProblem } from './catalog';

/** One tool subject found by discovery, and what its describe answer made of it. */
export interface DiscoveredEndpoint {
  subject: string;
  tool: string;
  tenant?: string | undefined;
  /** The described tool, or why it is withheld. */
  offered?: OfferedTool;
  problem?: ToolProblem;
  /** The last description's JSON: the tool is rebuilt only when it changes. */
  digest?: string;
  /** Rounds in a row in which no service listed this subject. */
  missed: number;
}

/** How many rounds in a row a subject may be missing (a service restarting) before its tool goes away. */
export const MISSED_ROUNDS_BEFORE_GONE = 2;

/**
 * One discovery round, pure: subjects seen now are kept (missed 0), new ones are added, and one not
 * seen for `MISSED_ROUNDS_BEFORE_GONE` rounds is dropped — its tool leaves the catalog. Returns the
 * endpoints to keep and which of them need a describe (all that were seen: descriptions may change).
 */
export function discoveryRound(
  known: ReadonlyMap<string, DiscoveredEndpoint>,
  seen: readonly { subject: string; tool: string; tenant?: string | undefined }[],
): { next: Map<string, DiscoveredEndpoint>; describe: string[]; gone: string[] } {
  const next = new Map<string, DiscoveredEndpoint>();
  const now = new Set(seen.map((s) => s.subject));
  for (const s of seen) {
    if (next.has(s.subject)) continue;
    const before = known.get(s.subject);
    next.set(s.subject, before ? { ...before, missed: 0 } : { ...s, missed: 0 });
  }
  const gone: string[] = [];
  for (const [subject, endpoint] of known) {
    if (now.has(subject)) continue;
    const missed = endpoint.missed + 1;
    if (missed >= MISSED_ROUNDS_BEFORE_GONE) gone.push(subject);
    else next.set(subject, { ...endpoint, missed });
  }
  return { next, describe: [...now], gone };
}
