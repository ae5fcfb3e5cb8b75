import type { NewEvent, ThreadEvent } from '@ratchet/contracts';
import { decide, foldRecord, recordFrom, snapshotStateOf } from '../src';
import type { Decision, SnapshotState, ThreadCommand, ThreadRecord } from '../src';

export const TENANT = 'acme';
export const THREAD = 'th-1';
export const AT = '2026-11-30T10:00:00.000Z';

/**
 * Gives NewEvents an envelope so they can be folded like stored events. Events a command caused are
 * stamped with the command's time (as the orchestrator does); bare history with `AT`.
 */
export function envelop(events: NewEvent[], startVersion = 1, at = AT): ThreadEvent[] {
  return events.map(
    (e, i) =>
      ({
        id: `ev-${startVersion + i}`,
        v: 1,
        tenantId: TENANT,
        threadId: THREAD,
        version: startVersion + i,
        at,
        causationId: 'test',
        correlationId: 'test',
        ...e,
      }) as ThreadEvent,
  );
}

/**
 * What the orchestrator adds to a command once it has loaded the thread: the run that already has the
 * request's id, if any (it looks it up in the tenant's `runs` projection, here the record's runs).
 */
export function atEdge(record: ThreadRecord, command: ThreadCommand): ThreadCommand {
  if (command.type !== 'RequestRun') return command;
  const run = Object.values(record.runs).find((r) => r.requestId === command.requestId);
  return run
    ? {
        ...command,
        known: { runId: run.runId, threadId: THREAD, requestDigest: run.requestDigest, outcome: run.outcome },
      }
    : command;
}

/**
 * given(events).when(command) → the decision, and everything the log says after it: the decider's state
 * with the conversation (`transcript`) and the run summaries (`runs`) that live in their own projections.
 */
export function given(history: NewEvent[]) {
  const record = foldRecord(recordFrom(), envelop(history));
  return {
    state: snapshotStateOf(record),
    when(command: ThreadCommand): Decision & { after: SnapshotState } {
      const decision = decide(record.state, atEdge(record, command));
      const after = foldRecord(record, envelop(decision.events, history.length + 1, command.at));
      return { ...decision, after: snapshotStateOf(after) };
    },
  };
}

/** Replays a sequence of commands from the empty thread, returning every event in order. */
export function run(commands: ThreadCommand[]): {
  events: NewEvent[];
  state: SnapshotState;
  decisions: Decision[];
} {
  const events: NewEvent[] = [];
  const decisions: Decision[] = [];
  let record = recordFrom();
  for (const c of commands) {
    const decision = decide(record.state, atEdge(record, c));
    decisions.push(decision);
    record = foldRecord(record, envelop(decision.events, events.length + 1, c.at));
    events.push(...decision.events);
  }
  return { events, state: snapshotStateOf(record), decisions };
}
