import { decodeThreadEvent, type ThreadEvent } from '@ratchet/contracts';
import {
  decide,
  foldRecord,
  recordFrom,
  settlingCalls,
  type ThreadCommand,
  type ThreadRecord,
  type ThreadState,
} from '@ratchet/domain';

export interface ForkIds {
  /** A fresh event id (`ev_…`). */
  eventId(): string;
  /** A fresh id with this prefix (`run`, `req`). */
  id(prefix: string): string;
}

export interface ForkPlan {
  events: ThreadEvent[];
  state: ThreadState;
  /** The fork's whole record (its conversation and runs), for its projection. */
  record: ThreadRecord;
  /** Runs that were in flight (or queued) at the fork point and were cancelled in the fork. */
  cancelledRuns: string[];
  /** Source id → fork id, for thread, runs and requests. */
  renamed: Record<string, string>;
}

/**
 * A new thread whose log is `source` up to `version`, re-enveloped: new event ids, the new thread id,
 * `causationId` = the source event's id. Run and request ids are renamed too (they are unique per
 * tenant in the `runs` projection, and idempotency keys embed them, so a fork can never collide with
 * the source's effects). Runs still open at that version are cancelled through the decider; their calls
 * still out will never run from the fork (nothing was sent for them), so each is closed as cancelled
 * right after, through the decider too. Pure: ids and time come in.
 */
export function planFork(
  source: readonly ThreadEvent[],
  version: number,
  newThreadId: string,
  at: string,
  ids: ForkIds,
): ForkPlan {
  const kept = source.filter((e) => e.version <= version);
  const first = kept[0];
  if (!first || kept.at(-1)!.version !== version) {
    throw new Error(`the source log has no version ${version} (it has v1–v${source.at(-1)?.version ?? 0})`);
  }
  const renamed: Record<string, string> = { [first.threadId]: newThreadId };
  for (const e of kept) {
    if (e.runId && !renamed[e.runId]) renamed[e.runId] = ids.id('run');
    if (e.type === 'run.requested' && !renamed[e.data.requestId]) renamed[e.data.requestId] = ids.id('req');
  }
  const rename = renamer(renamed);
  const events: ThreadEvent[] = kept.map((e) =>
    decodeThreadEvent({
      ...(JSON.parse(rename(JSON.stringify(e))) as object),
      id: ids.eventId(),
      causationId: e.id,
    }),
  );
  let record = foldRecord(recordFrom(), events);
  const cancelledRuns: string[] = [];
  const apply = (command: ThreadCommand) => {
    const decision = decide(record.state, command);
    for (const e of decision.events) {
      const event = decodeThreadEvent({
        id: ids.eventId(),
        v: 1,
        tenantId: first.tenantId,
        threadId: newThreadId,
        version: (events.at(-1)?.version ?? 0) + 1,
        at,
        causationId: events.at(-1)!.id,
        correlationId: e.runId ?? newThreadId,
        ...(e.runId ? { runId: e.runId } : {}),
        type: e.type,
        data: e.data,
      });
      events.push(event);
      record = foldRecord(record, [event]);
    }
  };
  const base = { tenantId: first.tenantId, threadId: newThreadId, at };
  const cancel = (runId: string) => {
    apply({ ...base, type: 'CancelRun', runId, by: 'ratchet fork', reason: 'forked' });
    for (const call of settlingCalls(record.state).filter((c) => c.runId === runId)) {
      apply({
        ...base,
        type: 'RecordToolResult',
        runId,
        step: call.step,
        callId: call.callId,
        outcome: { status: 'cancelled', reason: 'forked: the call was never sent from this thread' },
      });
    }
    cancelledRuns.push(runId);
  };
  // Queued runs first: cancelling the active run first would start the next one in the queue.
  for (const ticket of [...record.state.queue]) cancel(ticket.runId);
  if (record.state.active) cancel(record.state.active.runId);
  return { events, state: record.state, record, cancelledRuns, renamed };
}

/** Replaces whole ids only (ids are tokens of letters, digits, `_` and `-`). */
function renamer(map: Record<string, string>): (text: string) => string {
  const keys = Object.keys(map).sort((a, b) => b.length - a.length);
  if (keys.length === 0) return (t) => t;
  const pattern = new RegExp(`(?<![A-Za-z0-9_-])(${keys.map(escape).join('|')})(?![A-Za-z0-9_-])`, 'g');
  return (text) => text.replace(pattern, (m) => map[m] ?? m);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
