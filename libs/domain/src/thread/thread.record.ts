import type { ChatMessage, ThreadEvent } from '@ratchet/contracts';
import { evolve, messagesAdded } from './thread.evolve';
import { heldFor } from './run.waits';
import { initialThreadState, type RunEnding, type RunSummary, type RunTicket, type ThreadState } from './thread.state';

/**
 * Everything the log says of a thread: the decider's (bounded) state, and what grows with the thread's
 * history and is therefore kept out of it — the conversation across runs and a summary of every run.
 * The orchestrator never holds a whole record: it stores the state in `threads`, appends the messages a
 * decision adds to `thread_messages` and upserts the runs it touched in `runs` (all folded by
 * `foldRecord` from the decision's events). A rebuild, a replay, a compaction or an import folds whole
 * records, so both always agree.
 */
export interface ThreadRecord {
  state: ThreadState;
  /** The conversation, oldest first (`transcript[i]` is message number i + 1). */
  transcript: ChatMessage[];
  /** Every run that was accepted (requested), by run id. */
  runs: Record<string, RunSummary>;
  /** Per run, the version of the last event that changed its summary (its `runs` row's version). */
  runVersions: Record<string, number>;
}

/** A record that starts from `state` with nothing known of the history before it (a decision's delta). */
export function recordFrom(state: ThreadState = initialThreadState()): ThreadRecord {
  return { state, transcript: [], runs: {}, runVersions: {} };
}

/** Folds events into a record. Pure: the record passed in is not changed. */
export function foldRecord(record: ThreadRecord, events: readonly ThreadEvent[]): ThreadRecord {
  let state = record.state;
  const transcript = [...record.transcript];
  const runs = { ...record.runs };
  const runVersions = { ...record.runVersions };
  for (const event of events) {
    const before = state;
    transcript.push(...messagesAdded(before, event));
    state = evolve(before, event);
    const summary = runSummaryAfter(before, state, event);
    if (summary) {
      runs[summary.runId] = summary;
      runVersions[summary.runId] = event.version;
    }
  }
  return { state, transcript, runs, runVersions };
}

/** The summary of a run the state holds (queued or active); undefined for any other run. */
export function liveRunSummary(state: ThreadState, runId: string): RunSummary | undefined {
  const active = state.active;
  if (active?.runId === runId) {
    return {
      runId,
      requestId: active.requestId,
      agent: active.agent,
      agentVersion: active.agentVersion,
      principalId: active.principal.id,
      status: 'running',
      steps: active.answered,
      startedAt: active.startedAt,
      endedAt: null,
      requestDigest: active.requestDigest ?? null,
      outcome: null,
      ...(active.waiting ? { waiting: active.waiting } : {}),
      ...slotKeysOf(active),
    };
  }
  const ticket = state.queue.find((t) => t.runId === runId);
  if (!ticket) return undefined;
  return {
    runId,
    requestId: ticket.requestId,
    agent: ticket.agent,
    agentVersion: ticket.agentVersion,
    principalId: ticket.principal.id,
    status: 'queued',
    steps: 0,
    startedAt: null,
    endedAt: null,
    requestDigest: ticket.requestDigest ?? null,
    outcome: null,
    ...(ticket.held ? { waiting: { on: 'admission', since: ticket.held.since, for: heldFor(ticket.held) } } : {}),
    ...slotKeysOf(ticket),
    ...(ticket.queuedUntil ? { queuedUntil: ticket.queuedUntil } : {}),
    ...(ticket.priority ? { priority: ticket.priority } : {}),
  };
}

function slotKeysOf(run: RunTicket): { slotKeys?: string[]; throttleKey?: string; debounceKey?: string } {
  return {
    ...(run.slots && run.slots.length > 0 ? { slotKeys: run.slots.map((s) => s.key) } : {}),
    ...(run.throttle ? { throttleKey: run.throttle.key } : {}),
    ...(run.debounce ? { debounceKey: run.debounce.key } : {}),
  };
}

/**
 * The summary of `event`'s run after it (`before` and `after` are the states around it): a run still
 * queued or active as the state says; a run this event ended with its final status and end time;
 * undefined when the event leaves no run to summarise (no run id, a rejected request, an ended run).
 */
export function runSummaryAfter(before: ThreadState, after: ThreadState, event: ThreadEvent): RunSummary | undefined {
  const runId = event.runId;
  if (runId === undefined) return undefined;
  const live = liveRunSummary(after, runId);
  if (live) return live;
  if (event.type !== 'run.completed' && event.type !== 'run.failed' && event.type !== 'run.cancelled') return undefined;
  const was = liveRunSummary(before, runId);
  if (!was) return undefined;
  const outcome: RunEnding =
    event.type === 'run.completed'
      ? { status: 'completed', output: event.data.output }
      : event.type === 'run.failed'
        ? { status: 'failed', error: event.data.error }
        : { status: 'cancelled' };
  // What only a queued or waiting run has (its wait, its queue deadline and priority) ends with it.
  const { waiting: _ended, queuedUntil: _deadline, priority: _priority, ...ended } = was;
  return { ...ended, status: outcome.status, endedAt: event.at, outcome };
}

/**
 * What a snapshot keeps of the events it replaced: the state, plus the conversation and the run
 * summaries (which a compacted log can no longer give). The same shape as the state before ADR 0007,
 * so snapshots and exports written before it read as they are.
 */
export interface SnapshotState extends ThreadState {
  transcript: ChatMessage[];
  runs: Record<string, RunSummary>;
}

export function snapshotStateOf(record: ThreadRecord): SnapshotState {
  return { ...record.state, transcript: record.transcript, runs: record.runs };
}

/**
 * A record from a snapshot's state and run versions. A snapshot written before ADR 0007 lacks the
 * state's facts about the conversation and its active run's start and answered steps: they are
 * derived from its transcript and run summaries, exactly as the fold would have set them.
 */
export function recordOfSnapshot(snapshot: SnapshotState, runVersions: Record<string, number>): ThreadRecord {
  const { transcript = [], runs = {}, ...rest } = snapshot as Partial<SnapshotState> & ThreadState;
  const last = transcript[transcript.length - 1];
  const state: ThreadState = {
    ...rest,
    messages: rest.messages ?? transcript.length,
    lastAssistant:
      rest.lastAssistant !== undefined
        ? rest.lastAssistant
        : last?.role === 'assistant'
          ? { content: last.content }
          : null,
  };
  if (state.active && (state.active.startedAt === undefined || state.active.answered === undefined)) {
    const summary = runs[state.active.runId];
    state.active = { ...state.active, startedAt: summary?.startedAt ?? '', answered: summary?.steps ?? 0 };
  }
  const versions: Record<string, number> = {};
  for (const runId of Object.keys(runs)) versions[runId] = runVersions[runId] ?? 0;
  return { state, transcript, runs, runVersions: versions };
}
