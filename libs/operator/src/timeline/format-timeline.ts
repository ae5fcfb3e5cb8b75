import type { Json, ThreadEvent } from '@ratchet/contracts';

/**
 * A thread's event log as a human reads it: one line per event with its version, time (UTC,
 * HH:MM:SS.mmm), type and a short summary. The tool calls (and approvals) of a super-step are indented
 * under the `model.responded` that asked for them; a model call with attempt > 1 is marked RETRY.
 *
 * Pure: no clock, no I/O, no colour unless a styler is passed (the command passes one only on a TTY).
 *
 *   v3   09:14:03.120  run.started        run run_7f… (agent demo v1)
 *   v7   09:14:33.139  model.responded    step 1 → 2 tool calls: demo.weather(city=Oslo), demo.weather(city=Rome)
 *   v8   09:14:33.139    tool.requested   demo.weather call_1_1 key …run_7f…:1:call_1_1
 */
export type Style = 'dim' | 'bold' | 'red' | 'green' | 'yellow' | 'blue' | 'magenta' | 'cyan';
export type Styler = (style: Style, text: string) => string;

export interface TimelineOptions {
  /** Colours parts of a line; default none. */
  style?: Styler;
  /** Longest JSON value or quoted text shown before it is cut with `…`. Default 60. */
  maxValueLength?: number;
  /**
   * The effect ledger by idempotency key: each `tool.requested` line then ends with the ledger's state
   * and attempts (`[ledger succeeded ×1]`), so a retried or uncertain effect shows where it happened.
   */
  ledger?: ReadonlyMap<string, { state: string; attempts: number }>;
  /** Show the trace id (from `event.trace.traceparent`) wherever it changes from the event before. */
  traces?: boolean;
}

export const RETRY_MARK = 'RETRY';
export const RESUME_MARK = 'RESUME';
const INDENT = '  ';
const MAX_KEY = 40;
const MAX_ARG = 24;
const MAX_CALLS_SHOWN = 3;
const ENDS_STEP = new Set<ThreadEvent['type']>([
  'model.requested',
  'model.responded',
  'run.completed',
  'run.failed',
  'run.cancelled',
]);

interface Row {
  version: string;
  time: string;
  indent: string;
  type: string;
  typeStyle: Style | undefined;
  mark: string | undefined;
  summary: string;
  suffix: string;
}

/** Formats a whole log (or a slice of one, e.g. `--from 5`) as lines, without trailing newlines. */
export function formatTimeline(events: readonly ThreadEvent[], options: TimelineOptions = {}): string[] {
  const style: Styler = options.style ?? ((_s, text) => text);
  const formatter = new TimelineFormatter(options.maxValueLength ?? 60, options.ledger, options.traces === true);
  const rows = events.map((e) => formatter.row(e));
  const versionWidth = Math.max(0, ...rows.map((r) => r.version.length));
  const typeWidth = Math.max(0, ...rows.map((r) => r.indent.length + r.type.length));
  return rows.map((r) => {
    const type = r.type.padEnd(typeWidth - r.indent.length);
    const parts = [
      style('dim', r.version) + ' '.repeat(versionWidth - r.version.length),
      style('dim', r.time),
      `${r.indent}${r.typeStyle ? style(r.typeStyle, r.type) : r.type}${' '.repeat(type.length - r.type.length)}`,
      `${r.mark ? `${style('yellow', r.mark)} ` : ''}${r.summary}${r.suffix ? ` ${style('dim', r.suffix)}` : ''}`,
    ];
    return parts.join('  ').trimEnd();
  });
}

/** Reads the log in order, remembering what later lines refer to (a run's agent, the open super-step). */
class TimelineFormatter {
  private readonly agents = new Map<string, string>();
  /** The calls of the latest super-step (its model.responded), whose events are indented beneath it. */
  private step: { runId: string | undefined; calls: Set<string> } | undefined;

  private lastTrace: string | undefined;

  constructor(
    private readonly max: number,
    private readonly ledger: TimelineOptions['ledger'],
    private readonly traces: boolean,
  ) {}

  row(e: ThreadEvent): Row {
    const grouped = this.isInStep(e);
    // A super-step ends with the next model call or the end of its run; a resume inside it does not end it.
    if (ENDS_STEP.has(e.type) && e.runId === this.step?.runId) this.step = undefined;
    const row: Row = {
      version: `v${e.version}`,
      time: clock(e.at),
      indent: grouped ? INDENT : '',
      type: e.type,
      typeStyle: styleOf(e.type),
      mark:
        e.type === 'model.requested' && e.data.attempt > 1
          ? RETRY_MARK
          : e.type === 'run.resumed'
            ? RESUME_MARK
            : undefined,
      summary: this.summary(e),
      suffix: [this.ledgerNote(e), this.traceNote(e)].filter((x) => x !== '').join(' '),
    };
    if (e.type === 'model.responded' && e.data.toolCalls.length > 0) {
      this.step = { runId: e.runId, calls: new Set(e.data.toolCalls.map((c) => c.id)) };
    }
    return row;
  }

  private isInStep(e: ThreadEvent): boolean {
    if (!this.step || e.runId !== this.step.runId) return false;
    switch (e.type) {
      case 'tool.requested':
      case 'tool.completed':
      case 'tool.failed':
      case 'tool.cancelled':
      case 'effect.uncertain':
      case 'approval.requested':
      case 'approval.granted':
      case 'approval.rejected':
      case 'approval.expired':
      case 'waitpoint.created':
      case 'waitpoint.completed':
      case 'waitpoint.failed':
      case 'waitpoint.expired':
        return this.step.calls.has(e.data.callId);
      default:
        return false;
    }
  }

  private summary(e: ThreadEvent): string {
    switch (e.type) {
      case 'thread.created':
        return `by ${e.data.createdBy}`;
      case 'run.requested': {
        const agent = `${e.data.agent} v${e.data.agentVersion}`;
        if (e.runId) this.agents.set(e.runId, agent);
        const input = e.data.input.at(-1)?.content ?? '';
        return `run ${e.runId ?? '?'} by ${e.data.principal.id}: agent ${agent}, ${this.quote(input)}`;
      }
      case 'run.queued':
        return `run ${e.runId ?? '?'} behind run ${e.data.behindRunId}`;
      case 'run.rejected':
        return `${e.runId ? `run ${e.runId}` : `request ${e.data.requestId}`}: ${this.failure(e.data.error)}`;
      case 'run.started': {
        const agent = e.runId ? this.agents.get(e.runId) : undefined;
        return `run ${e.runId ?? '?'} (${agent ? `agent ${agent}` : `max ${e.data.maxSteps} steps`})`;
      }
      case 'model.requested': {
        const wait = e.data.notBefore ? `, not before ${clock(e.data.notBefore)}` : '';
        const why = e.data.retryReason ? ` (${this.text(e.data.retryReason)})` : '';
        return `step ${e.data.step} attempt ${e.data.attempt}${wait}${why}`;
      }
      case 'model.responded': {
        const calls = e.data.toolCalls;
        if (calls.length === 0) {
          return `step ${e.data.step} → ${e.data.content === null ? 'no content' : `answer ${this.quote(e.data.content)}`}`;
        }
        const shown = calls.slice(0, MAX_CALLS_SHOWN).map((c) => `${c.name}(${args(c.args)})`);
        if (calls.length > MAX_CALLS_SHOWN) shown.push(`+${calls.length - MAX_CALLS_SHOWN} more`);
        return `step ${e.data.step} → ${plural(calls.length, 'tool call')}: ${shown.join(', ')}`;
      }
      case 'tool.requested':
        return `${e.data.tool} ${e.data.callId} key ${shortKey(e.data.idempotencyKey)}`;
      case 'tool.completed':
        return `${e.data.callId} → ${this.json(e.data.result)}`;
      case 'tool.failed':
        return `${e.data.callId} ✗ ${this.failure(e.data.error)}`;
      case 'tool.cancelled':
        return `${e.data.callId} never ran: ${this.text(e.data.reason)}`;
      case 'result.ignored':
        return `${e.data.kind} for ${e.data.ref}${e.data.outcome ? ` (${e.data.outcome})` : ''}: ${this.text(e.data.reason)}`;
      case 'effect.uncertain':
        return `${e.data.callId} key ${shortKey(e.data.idempotencyKey)}: ${this.text(e.data.reason)}`;
      case 'approval.requested':
        return `${e.data.tool} ${e.data.callId} needs role ${e.data.role} (approval ${e.data.approvalId}, expires ${clock(e.data.expiresAt)})`;
      case 'approval.granted':
        return `${e.data.approvalId} for ${e.data.callId} by ${e.data.by}`;
      case 'approval.rejected':
        return `${e.data.approvalId} for ${e.data.callId} by ${e.data.by}: ${this.text(e.data.reason)}`;
      case 'approval.expired':
        return `${e.data.approvalId} for ${e.data.callId}`;
      case 'waitpoint.created': {
        const onExpiry = e.data.onExpiry === 'fail_run' ? 'the run fails' : 'the model is told';
        return `${e.data.callId} waits on ${e.data.waitpointId} (expires ${clock(e.data.expiresAt)}: then ${onExpiry})`;
      }
      case 'waitpoint.completed':
      case 'waitpoint.failed':
        return `${e.data.waitpointId} for ${e.data.callId} by ${e.data.by}`;
      case 'waitpoint.expired':
        return `${e.data.waitpointId} for ${e.data.callId}`;
      case 'run.completed':
        return `${this.quote(e.data.output)} after ${plural(e.data.steps, 'step')}`;
      case 'run.failed': {
        const pending = e.data.pendingCalls?.length ? ` (outcome to come: ${e.data.pendingCalls.join(', ')})` : '';
        return `${this.failure(e.data.error)}${pending}`;
      }
      case 'run.cancelled': {
        const closed = e.data.closedCalls.length > 0 ? ` (closed ${e.data.closedCalls.join(', ')})` : '';
        const pending = e.data.pendingCalls?.length ? ` (outcome to come: ${e.data.pendingCalls.join(', ')})` : '';
        return `by ${e.data.by}: ${this.text(e.data.reason)}${closed}${pending}`;
      }
      case 'run.resumed':
        return `from v${e.data.fromVersion} (${this.text(e.data.reason)}) by ${e.data.worker}`;
      default: {
        const unknown: never = e;
        return String(unknown);
      }
    }
  }

  private ledgerNote(e: ThreadEvent): string {
    if (!this.ledger || e.type !== 'tool.requested') return '';
    const row = this.ledger.get(e.data.idempotencyKey);
    if (!row) return '[ledger: none]';
    return `[ledger ${row.state} ×${row.attempts}${row.attempts > 1 ? ' RETRIED' : ''}]`;
  }

  private traceNote(e: ThreadEvent): string {
    if (!this.traces || !e.trace) return '';
    const traceId = e.trace.traceparent.split('-')[1] ?? e.trace.traceparent;
    if (traceId === this.lastTrace) return '';
    this.lastTrace = traceId;
    return `trace ${traceId}`;
  }

  private failure(error: { code: string; message: string }): string {
    return `${error.code}: ${this.text(error.message)}`;
  }

  private text(value: string): string {
    return truncate(oneLine(value), this.max);
  }

  private quote(value: string): string {
    return `"${this.text(value)}"`;
  }

  private json(value: Json): string {
    return truncate(JSON.stringify(value) ?? 'null', this.max);
  }
}

function styleOf(type: ThreadEvent['type']): Style | undefined {
  switch (type) {
    case 'run.completed':
    case 'approval.granted':
    case 'waitpoint.completed':
      return 'green';
    case 'run.failed':
    case 'run.rejected':
    case 'tool.failed':
      return 'red';
    case 'run.cancelled':
    case 'run.resumed':
    case 'tool.cancelled':
    case 'result.ignored':
    case 'effect.uncertain':
    case 'approval.requested':
    case 'approval.rejected':
    case 'approval.expired':
    case 'waitpoint.created':
    case 'waitpoint.failed':
    case 'waitpoint.expired':
      return 'yellow';
    default:
      if (type.startsWith('run.')) return 'cyan';
      if (type.startsWith('model.')) return 'blue';
      if (type.startsWith('tool.')) return 'magenta';
      return undefined;
  }
}

/** `HH:MM:SS.mmm` in UTC (the log stores UTC; the same line on every machine). */
export function clock(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : new Date(ms).toISOString().slice(11, 23);
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `city=Oslo, days=3`: plain words bare, anything else as JSON, each value cut short. */
function args(values: Record<string, Json>): string {
  return Object.entries(values)
    .map(([k, v]) => {
      const shown = typeof v === 'string' && /^[\p{L}\p{N} _.,:@/+-]*$/u.test(v) ? v : JSON.stringify(v);
      return `${k}=${truncate(shown, MAX_ARG)}`;
    })
    .join(', ');
}

/** Idempotency keys repeat tenant and thread; the end (run, step, call) is what tells them apart. */
function shortKey(key: string): string {
  if (key.length <= MAX_KEY) return key;
  const parts = key.split(':');
  while (parts.length > 1 && `…:${parts.join(':')}`.length > MAX_KEY) parts.shift();
  const tail = `…:${parts.join(':')}`;
  return tail.length <= MAX_KEY ? tail : `…${key.slice(key.length - (MAX_KEY - 1))}`;
}
