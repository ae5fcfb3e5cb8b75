/**
 * A thread's log as the console draws it: runs, their super-steps (the model attempts of the step and
 * the tool calls it asked for, side by side), what each call's effect and approval came to, resumes and
 * the trace id. Pure: events in, a view out; no fetch, no DOM.
 */

export interface LogEvent {
  type: string;
  version: number;
  at: string;
  runId?: string;
  data: Record<string, unknown>;
  trace?: { traceparent: string };
}

export type CallState =
  | 'requested'
  | 'waiting for approval'
  | 'waiting for its waitpoint'
  | 'completed'
  | 'failed'
  | 'uncertain'
  | 'cancelled';

export interface CallView {
  callId: string;
  tool: string;
  args: unknown;
  idempotencyKey: string;
  state: CallState;
  detail?: string;
  approval?: { id: string; status: 'pending' | 'granted' | 'rejected' | 'expired'; role: string; by?: string };
}

export interface AttemptView {
  attempt: number;
  at: string;
  /** A retry (provider error, timeout) or a redelivery after a worker was lost. */
  retry: boolean;
  reason?: string;
  delivery?: number;
}

export interface StepView {
  step: number;
  attempts: AttemptView[];
  answer?: { content: string | null; model: string; tokens?: number };
  calls: CallView[];
}

export interface RunTimeline {
  runId: string;
  agent?: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled' | 'rejected';
  traceId?: string;
  startedAt?: string;
  steps: StepView[];
  resumes: { at: string; reason: string; worker: string }[];
  outcome?: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

export function buildTimeline(events: readonly LogEvent[]): RunTimeline[] {
  const runs = new Map<string, RunTimeline>();
  const calls = new Map<string, CallView>();
  const run = (id: string): RunTimeline => {
    let r = runs.get(id);
    if (!r) {
      r = { runId: id, status: 'queued', steps: [], resumes: [] };
      runs.set(id, r);
    }
    return r;
  };
  const step = (r: RunTimeline, n: number): StepView => {
    let s = r.steps.find((x) => x.step === n);
    if (!s) {
      s = { step: n, attempts: [], calls: [] };
      r.steps.push(s);
      r.steps.sort((a, b) => a.step - b.step);
    }
    return s;
  };
  for (const e of [...events].sort((a, b) => a.version - b.version)) {
    if (!e.runId) continue;
    const r = run(e.runId);
    const d = e.data;
    if (e.trace && !r.traceId) r.traceId = e.trace.traceparent.split('-')[1];
    const call = (): CallView | undefined => calls.get(`${e.runId}:${str(d['callId'])}`);
    switch (e.type) {
      case 'run.requested':
        r.agent = typeof d['agent'] === 'string' ? d['agent'] : r.agent;
        break;
      case 'run.started':
        r.status = 'running';
        r.startedAt = e.at;
        break;
      case 'run.resumed':
        r.resumes.push({ at: e.at, reason: str(d['reason']), worker: str(d['worker']) });
        break;
      case 'model.requested': {
        const attempt = Number(d['attempt']);
        step(r, Number(d['step'])).attempts.push({
          attempt,
          at: e.at,
          retry: attempt > 1 || d['delivery'] !== undefined,
          ...(typeof d['retryReason'] === 'string' ? { reason: d['retryReason'] } : {}),
          ...(typeof d['delivery'] === 'number' ? { delivery: d['delivery'] } : {}),
        });
        break;
      }
      case 'model.responded': {
        const usage = d['usage'] as { inputTokens?: number; outputTokens?: number } | undefined;
        step(r, Number(d['step'])).answer = {
          content: (d['content'] as string | null) ?? null,
          model: str(d['model']),
          ...(usage ? { tokens: (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) } : {}),
        };
        break;
      }
      case 'tool.requested': {
        const c: CallView = {
          callId: str(d['callId']),
          tool: str(d['tool']),
          args: d['args'],
          idempotencyKey: str(d['idempotencyKey']),
          state: 'requested',
        };
        calls.set(`${e.runId}:${c.callId}`, c);
        step(r, Number(d['step'])).calls.push(c);
        break;
      }
      case 'tool.completed': {
        const c = call();
        if (c) Object.assign(c, { state: 'completed', detail: str(d['result']) });
        break;
      }
      case 'tool.failed': {
        const c = call();
        if (c)
          Object.assign(c, {
            state: 'failed',
            detail: str((d['error'] as { message?: string })?.message ?? d['error']),
          });
        break;
      }
      case 'tool.cancelled': {
        const c = call();
        if (c) c.state = 'cancelled';
        break;
      }
      case 'effect.uncertain': {
        const c = call();
        if (c) Object.assign(c, { state: 'uncertain', detail: str(d['reason']) });
        break;
      }
      case 'approval.requested': {
        const c = call();
        if (c) {
          c.state = 'waiting for approval';
          c.approval = { id: str(d['approvalId']), status: 'pending', role: str(d['role']) };
        }
        break;
      }
      case 'approval.granted':
      case 'approval.rejected':
      case 'approval.expired': {
        const c = call();
        if (c?.approval) {
          c.approval.status =
            e.type === 'approval.granted' ? 'granted' : e.type === 'approval.rejected' ? 'rejected' : 'expired';
          if (typeof d['by'] === 'string') c.approval.by = d['by'];
          if (c.state === 'waiting for approval') c.state = 'requested';
        }
        break;
      }
      case 'waitpoint.created': {
        const c = call();
        if (c) Object.assign(c, { state: 'waiting for its waitpoint', detail: `waitpoint ${str(d['waitpointId'])}` });
        break;
      }
      case 'run.completed':
        r.status = 'completed';
        r.outcome = str(d['output']);
        break;
      case 'run.failed':
        r.status = 'failed';
        r.outcome = str((d['error'] as { message?: string })?.message ?? d['error']);
        break;
      case 'run.cancelled':
        r.status = 'cancelled';
        r.outcome = `cancelled by ${str(d['by'])}${d['reason'] ? `: ${str(d['reason'])}` : ''}`;
        break;
      case 'run.rejected':
        r.status = 'rejected';
        r.outcome = str((d['error'] as { message?: string })?.message ?? d['error']);
        break;
      default:
        break;
    }
  }
  return [...runs.values()];
}
