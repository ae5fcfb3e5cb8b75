import type { CachedThread } from './thread-cache';
import type { ThreadEvent } from '@ratchet/contracts';
import type { OutboxMessage, ThreadCommand, ThreadState } from '@ratchet/domain';
import type { Counter, Histogram, Link, Span } from '@opentelemetry/api';
import { ATTR, failpoint, meter, recordSpan, SPAN } from '@ratchet/platform';

/** What the orchestrator tells about its decisions: `thread.append` span attributes and run/step metrics. */

/** What one message's decision left in the (shared) transaction. */
export interface Decided {
  status: 'applied' | 'duplicate' | 'no-op';
  events: ThreadEvent[];
  outbox: OutboxMessage[];
  /** Committed rows of the thread's feed found unpublished (a crash between a commit and its publish). */
  unsent?: OutboxMessage[];
  before?: ThreadState;
  /** Links of the `thread.append` span to the attempts this decision replaces (retries, resumes). */
  links?: Link[];
  /** What to remember of the thread once this decision is committed. */
  cache?: { tenantId: string; threadId: string; entry: CachedThread };
}

const RUN_OUTCOMES = new Set(['run.started', 'run.completed', 'run.failed', 'run.cancelled', 'run.rejected']);
let runs: Counter | undefined;
/** Runs started / completed / failed / cancelled / rejected, as OTLP metrics. */
function runsCounter(): Counter {
  return (runs ??= meter().createCounter('ratchet.runs', { description: 'Run lifecycle events committed' }));
}

let steps: Histogram | undefined;
/** Step latency: from a step's model request to the next step's (or the run's end). */
function recordStepLatency(before: ThreadState | undefined, events: readonly ThreadEvent[]): void {
  const started = before?.active?.stepStartedAt;
  if (!started) return;
  const next = events.find(
    (e) => (e.type === 'model.requested' && e.data.step > (before?.active?.step ?? 0)) || RUN_OUTCOMES.has(e.type),
  );
  if (!next) return;
  steps ??= meter().createHistogram('ratchet.step.duration', { unit: 'ms', description: 'Super-step latency' });
  steps.record(Date.parse(next.at) - Date.parse(started), { agent: before.active?.agent ?? '' });
}

export function appendAttributes(consumer: string, command: ThreadCommand) {
  return {
    [ATTR.tenant]: command.tenantId,
    [ATTR.thread]: command.threadId,
    [ATTR.consumer]: consumer,
    [ATTR.messageKind]: command.type,
  };
}

/** What a decision did, on its `thread.append` span. */
export function describeSpan(span: Span, d: Decided): void {
  if (d.events.length > 0) {
    span.setAttributes({
      [ATTR.run]: d.events[0]?.runId ?? '',
      [ATTR.versionFrom]: d.events[0]?.version ?? 0,
      [ATTR.versionTo]: d.events.at(-1)?.version ?? 0,
      [ATTR.eventCount]: d.events.length,
      [ATTR.eventTypes]: d.events.map((e) => e.type).join(','),
    });
  }
  span.setAttribute(ATTR.outcome, d.status);
  // Known only after deciding, so added to the running span rather than at its start.
  if (d.links?.length) span.addLinks(d.links);
}

const RUN_ENDS = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/**
 * The run's `invoke_agent` span, recorded once its end is committed: a run outlives the processes that
 * work on it, so no process holds a span open for it. It starts at `run.started` and is a child of the
 * run's own trace context (the one every message and event of the run carries).
 */
function recordRun(before: ThreadState | undefined, end: ThreadEvent): void {
  const run = before?.active;
  if (!run || run.runId !== end.runId) return;
  recordSpan(
    SPAN.invokeAgent(run.agent),
    {
      [ATTR.genAiOperation]: 'invoke_agent',
      [ATTR.genAiAgentName]: run.agent,
      [ATTR.genAiConversationId]: end.threadId,
      [ATTR.tenant]: end.tenantId,
      [ATTR.thread]: end.threadId,
      [ATTR.run]: run.runId,
      [ATTR.outcome]: end.type.slice('run.'.length),
      [ATTR.step]: run.step,
    },
    { start: Date.parse(run.startedAt), end: Date.parse(end.at) },
    run.trace,
  );
}

/** Metrics of a committed decision, the spans of the runs it ended, and the crash point right after the commit. */
export function afterCommit(d: Decided): void {
  if (d.events.length > 0) {
    for (const e of d.events) {
      if (RUN_OUTCOMES.has(e.type)) runsCounter().add(1, { event: e.type });
      if (RUN_ENDS.has(e.type)) recordRun(d.before, e);
    }
    recordStepLatency(d.before, d.events);
  }
  failpoint('orchestrator.after-commit');
}
