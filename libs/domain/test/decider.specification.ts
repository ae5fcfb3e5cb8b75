import type { NewEvent, ThreadEvent } from '@ratchet/contracts';
import { decide } from '../src';
import type { Decision, ThreadCommand } from '../src';
import { foldEvents } from '../src';
import { initialThreadState, ThreadState } from '../src';

export const TENANT = 'acme';
export const THREAD = 'th-1';
export const AT = '2026-11-30T10:00:00.000Z';

/** Gives NewEvents an envelope so they can be folded like stored events. */
export function envelop(events: NewEvent[], startVersion = 1): ThreadEvent[] {
  return events.map(
    (e, i) =>
      ({
        id: `ev-${startVersion + i}`,
        v: 1,
        tenantId: TENANT,
        threadId: THREAD,
        version: startVersion + i,
        at: AT,
        causationId: 'test',
        correlationId: 'test',
        ...e,
      }) as ThreadEvent,
  );
}

/** given(events).when(command) → the decision, and the state after it. */
export function given(history: NewEvent[]) {
  const state = foldEvents(initialThreadState(), envelop(history));
  return {
    state,
    when(command: ThreadCommand): Decision & { after: ThreadState } {
      const decision = decide(state, command);
      const after = foldEvents(state, envelop(decision.events, history.length + 1));
      return { ...decision, after };
    },
  };
}

/** Replays a sequence of commands from the empty thread, returning every event in order. */
export function run(commands: ThreadCommand[]): { events: NewEvent[]; state: ThreadState; decisions: Decision[] } {
  const events: NewEvent[] = [];
  const decisions: Decision[] = [];
  let state = initialThreadState();
  for (const c of commands) {
    const decision = decide(state, c);
    decisions.push(decision);
    state = foldEvents(state, envelop(decision.events, events.length + 1));
    events.push(...decision.events);
  }
  return { events, state, decisions };
}
