import fc from 'fast-check';
import type { ChatMessage, NewEvent } from '@ratchet/contracts';
import {
  decide,
  foldEvents,
  foldRecord,
  initialThreadState,
  modelCommandId,
  openCalls,
  recordFrom,
  settlingCalls,
  runRowsOf,
  type RunRow,
  type ThreadCommand,
  type ThreadRecord,
} from '../src';
import { AT, atEdge, envelop, TENANT, THREAD } from './decider.specification';

/**
 * Random valid (and some stale or duplicate) command sequences never produce an invalid history.
 * Each intent is interpreted against the current state, so sequences stay meaningful.
 */
type Intent =
  | { kind: 'request'; policy: 'reject' | 'enqueue' | 'interrupt'; maxSteps: number; budget: number | null }
  | { kind: 'model'; calls: number; fail: boolean; retryable: boolean; gated: number }
  | { kind: 'decide'; pick: number; decision: 'granted' | 'rejected' | 'expired' }
  | { kind: 'attempt'; delivery: number }
  | { kind: 'tool'; pick: number; outcome: 'completed' | 'failed' | 'uncertain' | 'cancelled' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'stale'; pick: number }
  | { kind: 'resume' };

const intent: fc.Arbitrary<Intent> = fc.oneof(
  fc.record({
    kind: fc.constant('request' as const),
    policy: fc.constantFrom('reject' as const, 'enqueue' as const, 'interrupt' as const),
    maxSteps: fc.integer({ min: 1, max: 4 }),
    budget: fc.option(fc.integer({ min: 1, max: 5 })),
  }),
  fc.record({
    kind: fc.constant('model' as const),
    calls: fc.integer({ min: 0, max: 3 }),
    fail: fc.boolean(),
    retryable: fc.boolean(),
    gated: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({
    kind: fc.constant('decide' as const),
    pick: fc.nat(),
    decision: fc.constantFrom('granted' as const, 'rejected' as const, 'expired' as const),
  }),
  fc.record({ kind: fc.constant('attempt' as const), delivery: fc.integer({ min: 2, max: 5 }) }),
  fc.record({
    kind: fc.constant('tool' as const),
    pick: fc.nat(),
    outcome: fc.constantFrom('completed' as const, 'failed' as const, 'uncertain' as const, 'cancelled' as const),
  }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('stale' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('resume' as const) }),
);

function toCommand(record: ThreadRecord, i: Intent, n: number, history: ThreadCommand[]): ThreadCommand | undefined {
  const base = { tenantId: TENANT, threadId: THREAD, at: AT };
  const state = record.state;
  const run = state.active;
  switch (i.kind) {
    case 'request':
      return {
        ...base,
        type: 'RequestRun',
        runId: `r${n}`,
        requestId: `q${n}`,
        agent: 'a',
        agentVersion: 1,
        maxSteps: i.maxSteps,
        input: [{ role: 'user', content: `m${n}` }],
        principal: { id: 'p', roles: [] },
        concurrency: i.policy,
        metadata: {},
        ...(i.budget !== null ? { limits: { modelCalls: i.budget, tokens: i.budget * 3 } } : {}),
      };
    case 'model':
      if (!run || run.phase !== 'model' || !run.modelCall) return undefined;
      return {
        ...base,
        type: 'RecordModelResult',
        runId: run.runId,
        step: run.step,
        commandId: run.modelCall.commandId,
        approvals: Object.fromEntries(
          Array.from({ length: Math.min(i.gated, i.calls) }, (_, k) => [
            `c${n}_${k}`,
            { approvalId: `ap${n}_${k}`, role: 'approver', expiresAt: AT, argsDigest: 'd', fourEyes: false },
          ]),
        ),
        outcome: i.fail
          ? { status: 'error', error: { code: 'x', message: 'x', retryable: i.retryable } }
          : {
              status: 'ok',
              content: i.calls === 0 ? 'answer' : null,
              toolCalls: Array.from({ length: i.calls }, (_, k) => ({ id: `c${n}_${k}`, name: 't', args: {} })),
              usage: { inputTokens: 1, outputTokens: 1 },
              model: 'm',
            },
      };
    case 'tool': {
      // A call of the active run, or one of an ended run whose outcome is still to come.
      const open = [
        ...(run
          ? openCalls(run)
              .filter((c) => c.status !== 'awaiting_approval')
              .map((c) => ({ runId: run.runId, step: run.step, callId: c.callId, key: c.idempotencyKey }))
          : []),
        ...settlingCalls(state).map((c) => ({ runId: c.runId, step: c.step, callId: c.callId, key: c.idempotencyKey })),
      ];
      const call = open[i.pick % Math.max(1, open.length)];
      if (!call) return undefined;
      const outcome =
        i.outcome === 'completed'
          ? ({ status: 'completed', result: { ok: true } } as const)
          : i.outcome === 'failed'
            ? ({ status: 'failed', error: { code: 'e', message: 'e', retryable: false } } as const)
            : i.outcome === 'cancelled'
              ? ({ status: 'cancelled', reason: 'the run stopped first' } as const)
              : ({ status: 'uncertain', idempotencyKey: call.key, reason: 'r' } as const);
      return { ...base, type: 'RecordToolResult', runId: call.runId, step: call.step, callId: call.callId, outcome };
    }
    case 'decide': {
      if (!run) return undefined;
      const waiting = run.calls.filter((c) => c.approval);
      const call = waiting[i.pick % Math.max(1, waiting.length)];
      if (!call?.approval) return undefined;
      return {
        ...base,
        type: 'RecordApprovalDecision',
        runId: run.runId,
        callId: call.callId,
        approvalId: call.approval.approvalId,
        decision: i.decision,
        by: 'b',
        reason: 'r',
      };
    }
    case 'cancel': {
      const ids = [...(run ? [run.runId] : []), ...state.queue.map((t) => t.runId), ...Object.keys(record.runs)];
      const runId = ids[i.pick % Math.max(1, ids.length)];
      return runId ? { ...base, type: 'CancelRun', runId, by: 'u', reason: 'r' } : undefined;
    }
    case 'stale': {
      // A redelivered old message, or a result of a replaced model attempt.
      const old = history[i.pick % Math.max(1, history.length)];
      if (old) return old;
      return run
        ? {
            ...base,
            type: 'RecordModelResult',
            runId: run.runId,
            step: run.step,
            commandId: modelCommandId(run.runId, run.step, 99),
            outcome: {
              status: 'ok',
              content: 'x',
              toolCalls: [],
              usage: { inputTokens: 0, outputTokens: 0 },
              model: 'm',
            },
          }
        : undefined;
    }
    case 'attempt':
      return run?.modelCall
        ? {
            ...base,
            type: 'RecordModelAttempt',
            runId: run.runId,
            commandId: run.modelCall.commandId,
            delivery: i.delivery,
            worker: 'w2',
          }
        : undefined;
    case 'resume':
      return run
        ? { ...base, type: 'ResumeRun', runId: run.runId, reason: 'nudge', worker: 'w', fromVersion: 0 }
        : undefined;
  }
}

/** The invariants a history must keep, checked on the event list alone. */
function assertValidHistory(events: NewEvent[]): void {
  const open = new Map<string, Set<string>>(); // runId → open call ids
  const pending = new Map<string, Set<string>>(); // ended runId → calls whose outcome is still to come
  const ended = new Set<string>();
  const started = new Set<string>();
  const resulted = new Set<string>();
  let active: string | undefined;
  for (const e of events) {
    const runId = e.runId ?? '';
    if (ended.has(runId)) {
      // After its end a run only hears the real outcomes of the calls it left out, and stray results.
      const settles =
        (e.type === 'tool.completed' ||
          e.type === 'tool.failed' ||
          e.type === 'tool.cancelled' ||
          e.type === 'effect.uncertain') &&
        pending.get(runId)?.has(e.data.callId);
      if (!settles && e.type !== 'run.rejected' && e.type !== 'result.ignored')
        throw new Error(`${e.type} after ${runId} ended`);
      if (settles && e.type !== 'effect.uncertain') {
        const key = `${runId}/${e.data.callId}`;
        if (resulted.has(key)) throw new Error(`second result for ${key}`);
        resulted.add(key);
        pending.get(runId)?.delete(e.data.callId);
      }
      continue;
    }
    switch (e.type) {
      case 'run.started':
        if (active) throw new Error(`run ${runId} started while ${active} is active`);
        active = runId;
        started.add(runId);
        break;
      case 'model.requested':
        if (active !== runId) throw new Error(`model.requested for ${runId}, not the active run`);
        if ((open.get(runId)?.size ?? 0) > 0)
          throw new Error(`model call while tool calls are open: ${[...(open.get(runId) ?? [])].join(',')}`);
        break;
      case 'tool.requested':
        if (!open.has(runId)) open.set(runId, new Set());
        open.get(runId)?.add(e.data.callId);
        break;
      case 'tool.completed':
      case 'tool.failed':
      case 'tool.cancelled': {
        const key = `${runId}/${e.data.callId}`;
        if (!open.get(runId)?.has(e.data.callId)) throw new Error(`result for ${key}, which is not open`);
        if (resulted.has(key)) throw new Error(`second result for ${key}`);
        resulted.add(key);
        open.get(runId)?.delete(e.data.callId);
        break;
      }
      case 'run.completed':
      case 'run.failed':
      case 'run.cancelled':
        if (active === runId) {
          // Calls still out may stay open only when the end names them as pending (their outcome follows).
          const left = [...(open.get(runId) ?? [])];
          const named = new Set(e.type === 'run.completed' ? [] : (e.data.pendingCalls ?? []));
          const unnamed = left.filter((c) => !named.has(c));
          if (unnamed.length > 0) throw new Error(`${runId} ended with open calls ${unnamed.join(',')}`);
          if (named.size > 0) pending.set(runId, named);
          active = undefined;
        } else if (started.has(runId)) {
          throw new Error(`${e.type} for ${runId}, which is not active`);
        }
        ended.add(runId);
        break;
      default:
        // The other events say nothing of a run's calls.
        break;
    }
  }
}

/**
 * Plays intents the way the orchestrator does: the edge supplies the request fact, each decision's events
 * are folded into the state it will store, and the messages and `runs` rows the decision adds are
 * written incrementally (appended / upserted), as `thread_messages` and `runs` are.
 */
function play(intents: Intent[]) {
  let record = recordFrom();
  const events: NewEvent[] = [];
  const history: ThreadCommand[] = [];
  const stored = { state: initialThreadState(), messages: [] as ChatMessage[], runs: new Map<string, RunRow>() };
  intents.forEach((i, n) => {
    const command = toCommand(record, i, n, history);
    if (!command) return;
    history.push(command);
    const d = decide(stored.state, atEdge(record, command));
    const enveloped = envelop(d.events, events.length + 1);
    const delta = foldRecord(recordFrom(stored.state), enveloped);
    stored.state = delta.state;
    stored.messages.push(...delta.transcript);
    for (const row of runRowsOf(TENANT, THREAD, delta)) stored.runs.set(row.runId, row);
    record = foldRecord(record, enveloped);
    events.push(...d.events);
  });
  return { record, events, stored };
}

describe('thread decider properties', () => {
  it('never produces an invalid history from any sequence of commands', () => {
    fc.assert(
      fc.property(fc.array(intent, { maxLength: 60 }), (intents) => {
        const { record, events } = play(intents);
        assertValidHistory(events);
        // The transcript a next model call would see is valid: every tool message answers a call
        // of the assistant message before it.
        const pending = new Set<string>();
        for (const m of record.transcript) {
          if (m.role === 'assistant') {
            if (pending.size > 0 && !record.state.active)
              throw new Error('assistant message while tool calls unanswered');
            m.toolCalls.forEach((c) => pending.add(c.id));
          } else if (m.role === 'tool') {
            if (!pending.delete(m.toolCallId)) throw new Error(`tool message for unknown call ${m.toolCallId}`);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('starts at most one run per request id, however often and late the request comes again', () => {
    fc.assert(
      fc.property(fc.array(intent, { maxLength: 60 }), (intents) => {
        const { events } = play(intents);
        const requested = events.filter((e) => e.type === 'run.requested').map((e) => e.data.requestId);
        expect(new Set(requested).size).toBe(requested.length);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the stored projection the fold of the log: state, messages appended and runs upserted per decision', () => {
    fc.assert(
      fc.property(fc.array(intent, { maxLength: 60 }), (intents) => {
        const { record, events, stored } = play(intents);
        const whole = envelop(events);
        // The state the orchestrator stores after each decision is the state of the whole log.
        expect(stored.state).toEqual(foldEvents(initialThreadState(), whole));
        expect(stored.state).toEqual(record.state);
        // The messages written decision by decision are the conversation of the whole log, and the
        // state's facts about it agree with it.
        expect(stored.messages).toEqual(record.transcript);
        expect(record.state.messages).toBe(record.transcript.length);
        const last = record.transcript.at(-1);
        expect(record.state.lastAssistant).toEqual(last?.role === 'assistant' ? { content: last.content } : null);
        // The `runs` rows upserted decision by decision are the rows a rebuild derives from the log.
        const rebuilt = runRowsOf(TENANT, THREAD, foldRecord(recordFrom(), whole));
        expect(
          [...stored.runs.values()].sort((a, b) => a.version - b.version || a.runId.localeCompare(b.runId)),
        ).toEqual(rebuilt);
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic: the same commands give the same events', () => {
    fc.assert(
      fc.property(fc.array(intent, { maxLength: 30 }), (intents) => {
        expect(play(intents).events).toEqual(play(intents).events);
      }),
      { numRuns: 100 },
    );
  });
});
