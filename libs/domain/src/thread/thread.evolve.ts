import type { ChatMessage, LimitBound, ThreadEvent } from '@ratchet/contracts';
import { canonicalJson } from './canonical-json';
import { withWaitClock } from './run.waits';
import { settlingCalls, type ActiveRun, type PendingCall, type SettlingCall, type ThreadState } from './thread.state';

/** Folds one event into the state. Pure and total: an event that does not apply leaves state as it is. */
export function evolve(state: ThreadState, event: ThreadEvent): ThreadState {
  return withMessages(waitClock(transition(state, event), event.at), messagesAdded(state, event));
}

/** The active run's wait clock after an event (see `withWaitClock`). */
function waitClock(state: ThreadState, at: string): ThreadState {
  if (!state.active) return state;
  const active = withWaitClock(state.active, at);
  return active === state.active ? state : { ...state, active };
}

export function foldEvents(state: ThreadState, events: readonly ThreadEvent[]): ThreadState {
  return events.reduce(evolve, state);
}

/**
 * The chat messages `event` adds to the thread's conversation, given the state before it: a run's input
 * when it starts, the model's answer, each tool result, and a completed run's output unless the model's
 * last message already said it. The conversation itself is not part of the state (it grows with the
 * thread): `foldRecord` collects it, and the orchestrator stores it in `thread_messages`.
 */
export function messagesAdded(state: ThreadState, event: ThreadEvent): ChatMessage[] {
  switch (event.type) {
    case 'run.started':
      return state.queue.find((t) => t.runId === event.runId)?.input ?? [];
    case 'model.responded':
      return [{ role: 'assistant', content: event.data.content, toolCalls: event.data.toolCalls }];
    case 'tool.cancelled': {
      const call = activeCall(state, event.runId, event.data.callId);
      if (!call) return [];
      return [toolMessage(call, { error: 'tool.cancelled', message: event.data.reason }, true)];
    }
    case 'run.cancelled':
    case 'run.failed': {
      // Calls still out when the run stopped get a placeholder result now, so the conversation stays valid
      // (every tool call answered) for the thread's next run; their real outcome goes to the log only.
      const pending = event.data.pendingCalls ?? [];
      if (pending.length === 0 || state.active?.runId !== event.runId) return [];
      return pending.flatMap((callId) => {
        const call = state.active?.calls.find((c) => c.callId === callId);
        return call ? [toolMessage(call, PENDING_PLACEHOLDER(event.type), true)] : [];
      });
    }
    case 'tool.completed':
    case 'tool.failed': {
      const call = activeCall(state, event.runId, event.data.callId);
      if (!call) return [];
      return event.type === 'tool.completed'
        ? [
            {
              role: 'tool',
              toolCallId: call.callId,
              name: call.tool,
              content: canonicalJson(event.data.result),
              isError: false,
            },
          ]
        : [
            {
              role: 'tool',
              toolCallId: call.callId,
              name: call.tool,
              content: canonicalJson({ error: event.data.error.code, message: event.data.error.message }),
              isError: true,
            },
          ];
    }
    case 'run.completed': {
      const output = event.data.output;
      if (state.active?.runId !== (event.runId ?? '') || output === undefined) return [];
      return state.lastAssistant?.content === output ? [] : [{ role: 'assistant', content: output, toolCalls: [] }];
    }
    // Nothing of these is said in the conversation (a new event type must say which it is).
    case 'thread.created':
    case 'run.requested':
    case 'run.queued':
    case 'run.rejected':
    case 'run.resumed':
    case 'model.requested':
    case 'tool.requested':
    case 'approval.requested':
    case 'approval.granted':
    case 'approval.rejected':
    case 'approval.expired':
    case 'waitpoint.created':
    case 'waitpoint.completed':
    case 'waitpoint.failed':
    case 'waitpoint.expired':
    case 'effect.uncertain':
    case 'result.ignored':
      return [];
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
}

function activeCall(state: ThreadState, runId: string | undefined, callId: string): PendingCall | undefined {
  return state.active?.runId === runId ? state.active?.calls.find((c) => c.callId === callId) : undefined;
}

function toolMessage(call: PendingCall, content: Record<string, string>, isError: boolean): ChatMessage {
  return { role: 'tool', toolCallId: call.callId, name: call.tool, content: canonicalJson(content), isError };
}

const PENDING_PLACEHOLDER = (type: 'run.cancelled' | 'run.failed'): Record<string, string> => ({
  error: type === 'run.cancelled' ? 'run.cancelled' : 'run.stopped',
  message:
    type === 'run.cancelled'
      ? 'the run was cancelled before this call reported; its outcome is recorded in the log'
      : 'the run stopped before this call reported; its outcome is recorded in the log',
});

/** The two facts the state keeps of the conversation: its length and its last assistant message. */
function withMessages(state: ThreadState, added: readonly ChatMessage[]): ThreadState {
  const last = added[added.length - 1];
  if (!last) return state;
  return {
    ...state,
    messages: state.messages + added.length,
    lastAssistant: last.role === 'assistant' ? { content: last.content } : null,
  };
}

function transition(state: ThreadState, event: ThreadEvent): ThreadState {
  switch (event.type) {
    case 'thread.created':
      return { ...state, tenantId: event.tenantId, threadId: event.threadId, createdAt: event.at };

    case 'run.requested': {
      const runId = event.runId ?? '';
      const d = event.data;
      return {
        ...state,
        queue: [
          ...state.queue,
          {
            runId,
            requestId: d.requestId,
            agent: d.agent,
            agentVersion: d.agentVersion,
            maxSteps: d.maxSteps,
            input: d.input,
            principal: d.principal,
            concurrency: d.concurrency,
            replyTo: d.replyTo,
            ...(d.webhookUrl ? { webhookUrl: d.webhookUrl, metadata: d.metadata } : {}),
            ...(event.trace ? { trace: event.trace } : {}),
            ...(d.requestDigest ? { requestDigest: d.requestDigest } : {}),
            ...(d.limits ? { limits: d.limits } : {}),
            ...(d.slots && d.slots.length > 0 ? { slots: d.slots } : {}),
            ...(d.throttle ? { throttle: d.throttle } : {}),
            ...(d.debounce ? { debounce: d.debounce } : {}),
            ...(d.priority ? { priority: d.priority } : {}),
            ...(d.limits?.queueTtlSeconds !== undefined
              ? { queuedUntil: new Date(Date.parse(event.at) + d.limits.queueTtlSeconds * 1000).toISOString() }
              : {}),
          },
        ],
      };
    }

    case 'run.queued': {
      // Queued behind the thread's active run changes nothing more; queued for admission holds the ticket.
      const waitingFor = event.data.waitingFor;
      if (!waitingFor) return state;
      const held = { ...waitingFor, since: event.at };
      return { ...state, queue: state.queue.map((t) => (t.runId === event.runId ? { ...t, held } : t)) };
    }
    case 'run.rejected':
    case 'run.resumed':
    case 'result.ignored':
    case 'approval.rejected':
    case 'approval.expired':
      // The call is closed by the tool.failed that follows; these record who decided and why.
      return state;

    case 'approval.requested':
      return withActive(state, event.runId, (run) =>
        setCall(run, event.data.callId, 'awaiting_approval', {
          approval: {
            approvalId: event.data.approvalId,
            role: event.data.role,
            expiresAt: event.data.expiresAt,
            argsDigest: event.data.argsDigest,
            fourEyes: event.data.fourEyes,
          },
        }),
      );

    case 'approval.granted':
      return withActive(state, event.runId, (run) => setCall(run, event.data.callId, 'requested'));

    case 'waitpoint.created':
      return withActive(state, event.runId, (run) =>
        setCall(run, event.data.callId, 'awaiting_waitpoint', {
          waitpoint: {
            waitpointId: event.data.waitpointId,
            expiresAt: event.data.expiresAt,
            onExpiry: event.data.onExpiry,
            ...(event.data.resultSchema ? { resultSchema: event.data.resultSchema } : {}),
          },
        }),
      );

    case 'waitpoint.completed':
    case 'waitpoint.failed':
    case 'waitpoint.expired':
      // The call is closed by the tool.completed or tool.failed that follows; these record who decided.
      return state;

    case 'run.started': {
      const ticket = state.queue.find((t) => t.runId === event.runId);
      if (!ticket) return state;
      const active: ActiveRun = {
        ...ticket,
        step: 0,
        phase: 'model',
        modelCall: null,
        calls: [],
        startedAt: event.at,
        answered: 0,
      };
      return { ...state, active, queue: state.queue.filter((t) => t.runId !== event.runId) };
    }

    case 'model.requested':
      return withActive(state, event.runId, (run) => ({
        ...run,
        step: event.data.step,
        stepStartedAt: event.data.step === run.step ? (run.stepStartedAt ?? event.at) : event.at,
        phase: 'model',
        modelCall: {
          commandId: event.data.commandId,
          attempt: event.data.attempt,
          delivery: event.data.delivery,
          ...(event.data.notBefore ? { notBefore: event.data.notBefore } : {}),
        },
        // Every attempt may be billed: each one counts against the model-call budget. A call commanded again
        // because a provider limit had no room made no request: neither that nor its wait is spent.
        spent: {
          modelCalls: (run.spent?.modelCalls ?? 0) + (event.data.waitFor ? 0 : 1),
          tokens: run.spent?.tokens ?? 0,
        },
        ...(event.data.waitFor && event.data.notBefore
          ? waitedFor(run, event.data.waitFor.bound, event.at, event.data.notBefore)
          : {}),
        calls: event.data.step === run.step ? run.calls : [],
      }));

    case 'model.responded':
      return withActive(state, event.runId, (run) => ({
        ...run,
        phase: 'tools',
        modelCall: null,
        calls: [],
        answered: event.data.step,
        spent: {
          modelCalls: run.spent?.modelCalls ?? 0,
          tokens: (run.spent?.tokens ?? 0) + event.data.usage.inputTokens + event.data.usage.outputTokens,
        },
      }));

    case 'tool.requested':
      return withActive(state, event.runId, (run) => ({
        ...run,
        calls: [
          ...run.calls,
          {
            callId: event.data.callId,
            tool: event.data.tool,
            args: event.data.args,
            idempotencyKey: event.data.idempotencyKey,
            status: 'requested',
          },
        ],
      }));

    case 'effect.uncertain':
      if (isSettling(state, event.runId, event.data.callId))
        return settle(state, event.runId, event.data.callId, 'uncertain');
      return withActive(state, event.runId, (run) => setCall(run, event.data.callId, 'uncertain'));

    case 'tool.completed':
    case 'tool.failed':
    case 'tool.cancelled':
      if (isSettling(state, event.runId, event.data.callId)) return settle(state, event.runId, event.data.callId, null);
      return withActive(state, event.runId, (run) =>
        setCall(
          run,
          event.data.callId,
          event.type === 'tool.completed' ? 'completed' : event.type === 'tool.failed' ? 'failed' : 'cancelled',
        ),
      );

    case 'run.completed':
      return endRun(state, event.runId);
    case 'run.failed':
    case 'run.cancelled':
      return endRun(withSettling(state, event.runId, event.data.pendingCalls ?? []), event.runId);
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
}

/** The ending run's calls that are still out move to `settling`, where their real outcome is awaited. */
function withSettling(state: ThreadState, runId: string | undefined, pending: readonly string[]): ThreadState {
  const run = state.active;
  if (pending.length === 0 || !run || run.runId !== runId) return state;
  const moved: SettlingCall[] = run.calls
    .filter((c) => pending.includes(c.callId) && (c.status === 'requested' || c.status === 'uncertain'))
    .map((c) => ({
      runId: run.runId,
      step: run.step,
      callId: c.callId,
      tool: c.tool,
      args: c.args,
      idempotencyKey: c.idempotencyKey,
      status: c.status === 'uncertain' ? 'uncertain' : 'requested',
      principal: run.principal,
    }));
  return moved.length > 0 ? { ...state, settling: [...settlingCalls(state), ...moved] } : state;
}

function isSettling(state: ThreadState, runId: string | undefined, callId: string): boolean {
  return settlingCalls(state).some((c) => c.runId === runId && c.callId === callId);
}

/** A settling call's outcome: `uncertain` keeps waiting (for a human); anything else ends the wait. */
function settle(state: ThreadState, runId: string | undefined, callId: string, to: 'uncertain' | null): ThreadState {
  const rest = settlingCalls(state).flatMap((c): SettlingCall[] => {
    if (c.runId !== runId || c.callId !== callId) return [c];
    return to === null ? [] : [{ ...c, status: to }];
  });
  const { settling: _old, ...without } = state;
  return rest.length > 0 ? { ...without, settling: rest } : without;
}

function withActive(state: ThreadState, runId: string | undefined, f: (run: ActiveRun) => ActiveRun): ThreadState {
  if (!state.active || state.active.runId !== runId) return state;
  return { ...state, active: f(state.active) };
}

/** The run with one call's status changed (and what it now waits on, when it waits). */
function setCall(
  run: ActiveRun,
  callId: string,
  status: PendingCall['status'],
  waitsOn: Pick<PendingCall, 'approval' | 'waitpoint'> = {},
): ActiveRun {
  return { ...run, calls: run.calls.map((c) => (c.callId === callId ? { ...c, ...waitsOn, status } : c)) };
}

/** A run cancelled before it started leaves the queue; an active one leaves `active`. */
function endRun(state: ThreadState, runId: string | undefined): ThreadState {
  const id = runId ?? '';
  if (state.active?.runId === id) return { ...state, active: null };
  return { ...state, queue: state.queue.filter((t) => t.runId !== id) };
}

/** A named wait of a model call (a provider limit, or the provider's 429), recorded whole when it starts. */
function waitedFor(
  run: ActiveRun,
  bound: LimitBound,
  at: string,
  until: string,
): Pick<ActiveRun, 'waitedMs' | 'rateLimitedMs'> {
  const ms = Math.max(0, Date.parse(until) - Date.parse(at));
  return {
    waitedMs: (run.waitedMs ?? 0) + ms,
    ...(bound === 'rate_limited' ? { rateLimitedMs: (run.rateLimitedMs ?? 0) + ms } : {}),
  };
}
