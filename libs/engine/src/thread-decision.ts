import type { ChatMessage, ThreadEvent, TraceContext } from '@ratchet/contracts';
import {
  decide,
  foldEvents,
  foldRecord,
  initialThreadState,
  PoisonMessageError,
  recordFrom,
  runRowsOf,
  type IdSource,
  type OutboxMessage,
  type ThreadCommand,
  type ThreadState,
  type ThreadTx,
} from '@ratchet/domain';
import { activeSpanRecording, currentTraceContext, failpoint, newTraceContext } from '@ratchet/platform';
import type { Decided } from './decision-telemetry';
import type { CommandEnricher, ThreadEngineDeps } from './engine-deps';
import { feedDecisionMessages } from './feed-messages';
import { replacedAttemptLinks } from './replaced-attempts';
import { withFacts, type Loaded } from './thread-claims';

/**
 * One message's decision inside a thread transaction: fold what was loaded, decide (running the local
 * tools it calls and deciding their results too), then buffer the events, projection, conversation and
 * outbox rows in the transaction. Committing, retrying and grouping are the handler's.
 */

export type HandleMeta = {
  correlationId: string;
  trace?: TraceContext | undefined;
  delivery?: number;
  worker?: string;
};

/** What a decision needs besides the transaction: the service's parts, defaults filled in. */
export type DecisionContext = Pick<ThreadEngineDeps, 'subjects' | 'outgoing' | 'toCommand' | 'localTools'> & {
  enrich: CommandEnricher;
  leaseOf: NonNullable<ThreadEngineDeps['leaseOf']>;
  ids: IdSource;
};

/** Bounded: a model that keeps calling local tools in one step is still a finite decision. */
const MAX_LOCAL_DECISIONS = 256;

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

/** Decides one message on its loaded thread and buffers the writes in `tx` (committed by the caller). */
export async function decideInTx(
  deps: DecisionContext,
  tx: ThreadTx<ThreadState>,
  messageId: string,
  command: ThreadCommand,
  meta: HandleMeta,
  loaded: Loaded,
): Promise<Decided> {
  // Rows of the thread's feed a crash (or a slower replica) left unpublished: out before this decision's.
  const unsent = loaded.unsent?.length ? { unsent: loaded.unsent } : {};
  if (!loaded.claimed) return { status: 'duplicate', events: [], outbox: [], ...unsent };
  const { tenantId, threadId } = command;
  const { projection, newer } = loaded;
  let state = projection?.state ?? initialThreadState();
  let version = projection?.version ?? 0;
  if (newer.length > 0) {
    state = foldEvents(state, newer);
    version = newer[newer.length - 1]?.version ?? version;
  }
  const redelivered = (meta.delivery ?? 1) > 1;
  const enriched = withFacts(await deps.enrich(state, command), loaded);
  const first: ThreadCommand = redelivered
    ? {
        ...enriched,
        resume: { fromVersion: version, delivery: meta.delivery ?? 2, worker: meta.worker ?? 'unknown' },
      }
    : enriched;
  const trace = runTrace(command, state, meta.trace);
  // The message, then the results of the local tool calls it led to (each a message of its own, with
  // the executor's message id), every one decided on the state the one before left. What they write is
  // committed together, so a local call and its result are recorded by the same commit (ADR 0010).
  const inputs: { messageId: string; command: ThreadCommand }[] = [{ messageId, command: first }];
  const events: ThreadEvent[] = [];
  const toSend: OutboxMessage[] = [];
  let record = recordFrom(state);
  // Only a model call needs the conversation: the stored messages (read before this thread's writes are
  // buffered, so the read costs no flush) and the ones this decision adds.
  const known = loaded.cached?.transcript;
  let stored: readonly ChatMessage[] | undefined = known;
  let decided = 0;
  for (let input = inputs.shift(); input; input = inputs.shift()) {
    const decision = decide(record.state, input.command);
    if (++decided > MAX_LOCAL_DECISIONS)
      throw new PoisonMessageError(
        `thread ${threadId}: more than ${MAX_LOCAL_DECISIONS} local tool results in one decision`,
        'thread.local_decisions_exceeded',
      );
    const made = decision.events.map(
      (e, i): ThreadEvent =>
        ({
          id: deps.ids.next('ev'),
          v: 1,
          tenantId,
          threadId,
          runId: e.runId,
          version: version + events.length + 1 + i,
          at: command.at,
          causationId: input.messageId,
          correlationId: meta.correlationId,
          ...(trace ? { trace } : {}),
          type: e.type,
          data: e.data,
        }) as ThreadEvent,
    );
    events.push(...made);
    // The state to store, the messages these events add to the conversation and the runs they touched.
    record = foldRecord(record, made);
    if (decision.outgoing.length === 0) continue;
    if (decision.outgoing.some((o) => o.kind === 'model.call'))
      stored ??= await tx.loadMessages(tenantId, threadId, state.messages);
    const messages = await deps.outgoing({
      context: { tenantId, threadId, version: version + events.length, causationId: input.messageId, at: command.at },
      state: record.state,
      outgoing: decision.outgoing,
      trace,
      transcript: stored && [...stored, ...record.transcript],
    });
    for (const m of messages) {
      const local = deps.localTools;
      const tool = local?.toolOf(m);
      const result = local && tool !== undefined ? await local.run(tool, m) : undefined;
      if (result) inputs.push({ messageId: result.messageId, command: deps.toCommand(result, command.at) });
      else toSend.push(m);
    }
  }
  if (events.length === 0 && toSend.length === 0) {
    return { status: 'no-op', events: [], outbox: [], ...unsent };
  }
  const after = record.state;
  const newVersion = version + events.length;
  const transcript = stored && [...stored, ...record.transcript];
  if (events.length > 0) {
    await tx.appendEvents(tenantId, threadId, version, events);
    await tx.saveProjection(
      { tenantId, threadId, version: newVersion, state: after },
      runRowsOf(tenantId, threadId, record),
      record.transcript.length > 0 ? { from: state.messages + 1, messages: record.transcript } : undefined,
    );
  }
  // The thread's feed (v2, ADR 0042): one message per committed decision, its events in order.
  const outbox: OutboxMessage[] = [...feedDecisionMessages(deps.subjects, events), ...toSend];
  for (const m of outbox) {
    const lease = deps.leaseOf(m);
    if (lease) {
      m.leaseMs = lease.leaseMs;
      m.leasedBy = lease.holder;
      if (lease.storedPayload !== undefined) m.storedPayload = lease.storedPayload;
    }
  }
  await tx.enqueue(outbox);
  // Read only while a span records them (telemetry on).
  const links = activeSpanRecording()
    ? await replacedAttemptLinks(tx, { tenantId, threadId, version, newer }, events)
    : [];
  failpoint('orchestrator.before-commit');
  failpoint(`orchestrator.before-commit.${command.type}`);
  return {
    status: 'applied',
    events,
    outbox,
    ...unsent,
    before: state,
    links,
    cache: { tenantId, threadId, entry: { version: newVersion, state: after, transcript } },
  };
}
