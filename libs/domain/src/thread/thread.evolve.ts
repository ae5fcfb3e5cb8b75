import type { ChatMessage, ThreadEvent } from '@ratchet/contracts';
import { canonicalJson } from './canonical-json';
import type { ActiveRun, PendingCall, RunSummary, ThreadState } from './thread.state';

/** Folds one event into the state. Pure and total: an event that does not apply leaves state as it is. */
export function evolve(state: ThreadState, event: ThreadEvent): ThreadState {
  switch (event.type) {
    case 'thread.created':
      return { ...state, tenantId: event.tenantId, threadId: event.threadId, createdAt: event.at };

    case 'run.requested': {
      const runId = event.runId ?? '';
      const d = event.data;
      const summary: RunSummary = {
        runId,
        requestId: d.requestId,
        agent: d.agent,
        agentVersion: d.agentVersion,
        principalId: d.principal.id,
        status: 'queued',
        steps: 0,
        startedAt: null,
        endedAt: null,
      };
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
            ...(event.trace ? { trace: event.trace } : {}),
          },
        ],
        runs: { ...state.runs, [runId]: summary },
      };
    }

    case 'run.queued':
    case 'run.rejected':
    case 'run.resumed':
    case 'approval.rejected':
    case 'approval.expired':
      // The call is closed by the tool.failed that follows; these record who decided and why.
      return state;

    case 'approval.requested':
      return withActive(state, event.runId, (run) => ({
        ...run,
        calls: run.calls.map((c) =>
          c.callId === event.data.callId
            ? {
                ...c,
                status: 'awaiting_approval' as const,
                approval: {
                  approvalId: event.data.approvalId,
                  role: event.data.role,
                  expiresAt: event.data.expiresAt,
                  argsDigest: event.data.argsDigest,
                  fourEyes: event.data.fourEyes,
                },
              }
            : c,
        ),
      }));

    case 'approval.granted':
      return withActive(state, event.runId, (run) => setCall(run, event.data.callId, 'requested'));

    case 'run.started': {
      const ticket = state.queue.find((t) => t.runId === event.runId);
      if (!ticket) return state;
      const active: ActiveRun = {
        ...ticket,
        step: 0,
        phase: 'model',
        modelCall: null,
        calls: [],
      };
      return {
        ...state,
        active,
        queue: state.queue.filter((t) => t.runId !== event.runId),
        transcript: [...state.transcript, ...ticket.input],
        runs: patchRun(state.runs, ticket.runId, { status: 'running', startedAt: event.at }),
      };
    }

    case 'model.requested':
      return withActive(state, event.runId, (run) => ({
        ...run,
        step: event.data.step,
        stepStartedAt: event.data.step === run.step ? (run.stepStartedAt ?? event.at) : event.at,
        phase: 'model',
        modelCall: { commandId: event.data.commandId, attempt: event.data.attempt, delivery: event.data.delivery },
        calls: event.data.step === run.step ? run.calls : [],
      }));

    case 'model.responded': {
      const next = withActive(state, event.runId, (run) => ({ ...run, phase: 'tools', modelCall: null, calls: [] }));
      const message: ChatMessage = { role: 'assistant', content: event.data.content, toolCalls: event.data.toolCalls };
      const runId = event.runId ?? '';
      return {
        ...next,
        transcript: [...next.transcript, message],
        runs: patchRun(next.runs, runId, { steps: event.data.step }),
      };
    }

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
      return withActive(state, event.runId, (run) => setCall(run, event.data.callId, 'uncertain'));

    case 'tool.completed':
    case 'tool.failed': {
      const call = state.active?.calls.find((c) => c.callId === event.data.callId);
      if (!call) return state;
      const next = withActive(state, event.runId, (run) =>
        setCall(run, event.data.callId, event.type === 'tool.completed' ? 'completed' : 'failed'),
      );
      const message: ChatMessage =
        event.type === 'tool.completed'
          ? {
              role: 'tool',
              toolCallId: call.callId,
              name: call.tool,
              content: canonicalJson(event.data.result),
              isError: false,
            }
          : {
              role: 'tool',
              toolCallId: call.callId,
              name: call.tool,
              content: canonicalJson({ error: event.data.error.code, message: event.data.error.message }),
              isError: true,
            };
      return { ...next, transcript: [...next.transcript, message] };
    }

    case 'run.completed':
      return endRun(state, event.runId, 'completed', event.at, event.data.output);
    case 'run.failed':
      return endRun(state, event.runId, 'failed', event.at);
    case 'run.cancelled':
      return endRun(state, event.runId, 'cancelled', event.at);
  }
}

export function foldEvents(state: ThreadState, events: readonly ThreadEvent[]): ThreadState {
  return events.reduce(evolve, state);
}

function withActive(state: ThreadState, runId: string | undefined, f: (run: ActiveRun) => ActiveRun): ThreadState {
  if (!state.active || state.active.runId !== runId) return state;
  return { ...state, active: f(state.active) };
}

function setCall(run: ActiveRun, callId: string, status: PendingCall['status']): ActiveRun {
  return { ...run, calls: run.calls.map((c) => (c.callId === callId ? { ...c, status } : c)) };
}

function patchRun(
  runs: Record<string, RunSummary>,
  runId: string,
  patch: Partial<RunSummary>,
): Record<string, RunSummary> {
  const run = runs[runId];
  return run ? { ...runs, [runId]: { ...run, ...patch } } : runs;
}

function endRun(
  state: ThreadState,
  runId: string | undefined,
  status: 'completed' | 'failed' | 'cancelled',
  at: string,
  output?: string,
): ThreadState {
  const id = runId ?? '';
  const runs = patchRun(state.runs, id, { status, endedAt: at });
  // A run cancelled before it started leaves the queue; an active one leaves `active`.
  if (state.active?.runId === id) {
    const transcript =
      status === 'completed' && output !== undefined && lastAssistantContent(state.transcript) !== output
        ? [...state.transcript, { role: 'assistant' as const, content: output, toolCalls: [] }]
        : state.transcript;
    return { ...state, active: null, runs, transcript };
  }
  return { ...state, queue: state.queue.filter((t) => t.runId !== id), runs };
}

function lastAssistantContent(transcript: ChatMessage[]): string | null | undefined {
  const last = transcript[transcript.length - 1];
  return last?.role === 'assistant' ? last.content : undefined;
}
