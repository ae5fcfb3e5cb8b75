import type { Link } from '@opentelemetry/api';
import type { ThreadEvent } from '@ratchet/contracts';
import type { ThreadState, ThreadTx } from '@ratchet/domain';
import { ATTR, LINK, linkTo } from '@ratchet/platform';

/** Where a decision was made: the thread as loaded (its version and the events newer than the projection). */
export interface DecidedOn {
  tenantId: string;
  threadId: string;
  version: number;
  newer: readonly ThreadEvent[];
}

/**
 * Span links from a decision to the attempts it replaces, read from the trace each earlier event
 * stored: a model call's next attempt links to the span that requested the attempt before, a
 * `run.resumed` to the span that wrote the thread's last event. Costs a read only for such a decision.
 */
export async function replacedAttemptLinks(
  tx: ThreadTx<ThreadState>,
  on: DecidedOn,
  events: readonly ThreadEvent[],
): Promise<Link[]> {
  const links: Array<Link | undefined> = [];
  for (const e of events) {
    if (e.type === 'model.requested' && e.data.attempt > 1) {
      const { step, attempt } = e.data;
      const replaced = await lastEvent(
        tx,
        on,
        (x) => x.type === 'model.requested' && x.runId === e.runId && x.data.step === step && x.data.attempt < attempt,
      );
      links.push(linkTo(replaced?.trace, { [ATTR.linkReason]: LINK.replacedAttempt, [ATTR.attempt]: attempt - 1 }));
    }
    if (e.type === 'run.resumed') {
      const before = await lastEvent(tx, on, () => true);
      links.push(linkTo(before?.trace, { [ATTR.linkReason]: LINK.resumedAfter, [ATTR.versionTo]: on.version }));
    }
  }
  return links.filter((l): l is Link => l !== undefined);
}

/** The thread's latest event that matches: the loaded ones first, then windows further back in the log. */
async function lastEvent(
  tx: ThreadTx<ThreadState>,
  on: DecidedOn,
  match: (e: ThreadEvent) => boolean,
): Promise<ThreadEvent | undefined> {
  const found = on.newer.findLast(match);
  if (found) return found;
  let upTo = on.newer[0] ? on.newer[0].version - 1 : on.version;
  // A replaced attempt is a few events back at most; the window grows in case it is not.
  for (let window = 8; upTo > 0; window *= 4) {
    const from = Math.max(0, upTo - window);
    const events = await tx.loadEvents(on.tenantId, on.threadId, from);
    const hit = events.filter((e) => e.version <= upTo).findLast(match);
    if (hit) return hit;
    upTo = from;
  }
  return undefined;
}
