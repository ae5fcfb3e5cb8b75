import { randomUUID } from 'node:crypto';
import type { Subjects, ThreadEvent, TraceContext } from '@ratchet/contracts';
import {
  ConcurrencyError,
  decide,
  foldEvents,
  initialThreadState,
  runRows,
  type OutboxMessage,
  type ThreadCommand,
  type ThreadProjectionRow,
  type ThreadState,
  type ThreadStore,
  type ThreadTx,
} from '@ratchet/domain';
import type { Counter, Histogram } from '@opentelemetry/api';
import { ATTR, currentTraceContext, failpoint, inSpan, meter, newTraceContext, SPAN } from '@ratchet/platform';
import { feedMessages, outgoingMessages, type AgentToolConfigLookup } from './outbox-messages';

export { threadColumns } from '@ratchet/domain';

export interface Relay {
  /** Publishes these just-committed outbox rows now; the sweeper covers whatever this misses. */
  flush(ids: string[]): Promise<unknown>;
}

/** Completes a command with facts only the edge can supply once the thread is loaded (policy, clock, digests). */
export type CommandEnricher = (state: ThreadState, command: ThreadCommand) => Promise<ThreadCommand>;

export interface HandleOutcome {
  status: 'applied' | 'duplicate' | 'no-op';
  events: ThreadEvent[];
}

/** A store transaction that can claim the message and load the thread in one round trip (Postgres can). */
type ClaimingTx = ThreadTx<ThreadState> & {
  claimAndLoad?: (
    consumer: string,
    messageId: string,
    tenantId: string,
    threadId: string,
  ) => Promise<{ claimed: boolean; projection: ThreadProjectionRow<ThreadState> | undefined; newer: ThreadEvent[] }>;
};

/** Claim, projection and newer events: one statement where the store offers it, else three calls. */
async function claimAndLoad(tx: ClaimingTx, consumer: string, messageId: string, tenantId: string, threadId: string) {
  if (tx.claimAndLoad) return tx.claimAndLoad(consumer, messageId, tenantId, threadId);
  if (!(await tx.claimInbox(consumer, messageId))) return { claimed: false, projection: undefined, newer: [] };
  const projection = await tx.loadProjection(tenantId, threadId);
  const newer = await tx.loadEvents(tenantId, threadId, projection?.version ?? 0);
  return { claimed: true, projection, newer };
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

/**
 * The trace a decision's events and messages carry: the active span's when telemetry is on (so the
 * next hop is its child), else the run's stored trace, else the incoming one; a run that arrives with
 * none gets a new trace id, so every event of a run names one trace.
 */
function runTrace(
  command: ThreadCommand,
  state: ThreadState,
  incoming: TraceContext | undefined,
): TraceContext | undefined {
  const current = currentTraceContext();
  if (current) return current;
  if (command.type === 'RequestRun') return incoming ?? newTraceContext();
  return state.active?.trace ?? incoming;
}

/** Bounded: a thread under heavy contention is retried by redelivery, not by spinning here forever. */
const MAX_CONFLICT_RETRIES = 8;

/**
 * The orchestrator's one way to change a thread: claim the message in the inbox, load the projection
 * and any newer events, decide, then append + project + enqueue in the same transaction. Published only
 * after commit. A conflict with another worker reloads and decides again.
 */
export class ThreadCommandHandler {
  constructor(
    private readonly store: ThreadStore<ThreadState>,
    private readonly relay: Relay,
    private readonly subjects: Subjects,
    private readonly enrich: CommandEnricher = async (_state, command) => command,
    /** The pinned agent version's per-tool settings, sent with each tool call (e.g. allowHosts). */
    private readonly toolConfigs: (state: ThreadState) => Promise<AgentToolConfigLookup | undefined> = async () =>
      undefined,
  ) {}

  async handle(
    consumer: string,
    messageId: string,
    command: ThreadCommand,
    meta: { correlationId: string; trace?: TraceContext | undefined; delivery?: number; worker?: string },
  ): Promise<HandleOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await inSpan(
          SPAN.append,
          {
            [ATTR.tenant]: command.tenantId,
            [ATTR.thread]: command.threadId,
            [ATTR.consumer]: consumer,
            [ATTR.messageKind]: command.type,
          },
          async (span) => {
            const committed = await this.store.transaction(async (tx) => {
              const { tenantId, threadId } = command;
              const loaded = await claimAndLoad(tx, consumer, messageId, tenantId, threadId);
              if (!loaded.claimed) return { status: 'duplicate' as const, events: [], outbox: [] };
              const { projection, newer } = loaded;
              let state = projection?.state ?? initialThreadState();
              let version = projection?.version ?? 0;
              if (newer.length > 0) {
                state = foldEvents(state, newer);
                version = newer[newer.length - 1]?.version ?? version;
              }
              const redelivered = (meta.delivery ?? 1) > 1;
              const enriched = await this.enrich(state, command);
              const decision = decide(
                state,
                redelivered
                  ? {
                      ...enriched,
                      resume: { fromVersion: version, delivery: meta.delivery ?? 2, worker: meta.worker ?? 'unknown' },
                    }
                  : enriched,
              );
              if (decision.events.length === 0 && decision.outgoing.length === 0) {
                return { status: 'no-op' as const, events: [], outbox: [] };
              }
              const trace = runTrace(command, state, meta.trace);
              const events = decision.events.map(
                (e, i): ThreadEvent =>
                  ({
                    id: `ev_${randomUUID().replaceAll('-', '')}`,
                    v: 1,
                    tenantId,
                    threadId,
                    runId: e.runId,
                    version: version + 1 + i,
                    at: command.at,
                    causationId: messageId,
                    correlationId: meta.correlationId,
                    ...(trace ? { trace } : {}),
                    type: e.type,
                    data: e.data,
                  }) as ThreadEvent,
              );
              const after = foldEvents(state, events);
              const newVersion = version + events.length;
              if (events.length > 0) {
                await tx.appendEvents(tenantId, threadId, version, events);
                await tx.saveProjection(
                  { tenantId, threadId, version: newVersion, state: after },
                  runRows(tenantId, threadId, after, events, newVersion),
                );
              }
              const outbox: OutboxMessage[] = [
                ...feedMessages(this.subjects, events),
                ...outgoingMessages(
                  this.subjects,
                  tenantId,
                  threadId,
                  after,
                  newVersion,
                  decision.outgoing,
                  trace,
                  decision.outgoing.some((o) => o.kind === 'tool.call') ? await this.toolConfigs(after) : undefined,
                ),
              ];
              await tx.enqueue(outbox);
              failpoint('orchestrator.before-commit');
              failpoint(`orchestrator.before-commit.${command.type}`);
              return { status: 'applied' as const, events, outbox, before: state };
            });
            if (committed.events.length > 0) {
              span.setAttributes({
                [ATTR.run]: committed.events[0]?.runId ?? '',
                [ATTR.versionFrom]: committed.events[0]?.version ?? 0,
                [ATTR.versionTo]: committed.events.at(-1)?.version ?? 0,
                [ATTR.eventCount]: committed.events.length,
                [ATTR.eventTypes]: committed.events.map((e) => e.type).join(','),
              });
              for (const e of committed.events) if (RUN_OUTCOMES.has(e.type)) runsCounter().add(1, { event: e.type });
              recordStepLatency(committed.before, committed.events);
            }
            span.setAttribute(ATTR.outcome, committed.status);
            return committed;
          },
        );
        failpoint('orchestrator.after-commit');
        if (result.outbox.length > 0) {
          // Publishing right after commit keeps latency low; if this process dies first, the sweeper does it.
          await this.relay.flush(result.outbox.map((m) => m.id)).catch(() => undefined);
        }
        return { status: result.status, events: result.events };
      } catch (error) {
        if (error instanceof ConcurrencyError && attempt < MAX_CONFLICT_RETRIES) continue;
        throw error;
      }
    }
  }
}
