import { decodeThreadEvent, type ThreadEvent } from '@ratchet/contracts';
import { DEMO_RUN, demoRunEvents } from '@ratchet/testing';
import { clock, formatTimeline, truncate, type Style } from './format-timeline';

/** Builds one more event continuing `events`, as the orchestrator would append it. */
function next<T extends ThreadEvent['type']>(
  events: ThreadEvent[],
  type: T,
  data: Extract<ThreadEvent, { type: T }>['data'],
  atMs = 0,
): ThreadEvent {
  const last = events.at(-1)!;
  const event = {
    ...last,
    id: `ev_extra_${last.version + 1}`,
    version: last.version + 1,
    at: new Date(Date.parse(last.at) + atMs).toISOString(),
    type,
    data,
  } as ThreadEvent;
  events.push(event);
  return event;
}

/** Lines without their version and time columns, whitespace collapsed: what the reader sees. */
function gist(line: string): string {
  const rest = line.replace(/^v\d+ +\d\d:\d\d:\d\d\.\d{3} {2}/, '');
  const indent = /^ */.exec(rest)![0];
  return indent + rest.trimStart().replace(/ {2,}/g, '  ');
}

describe('formatTimeline', () => {
  const events = demoRunEvents();

  it('is built from events that pass the wire schema', () => {
    for (const e of events) expect(decodeThreadEvent(JSON.parse(JSON.stringify(e)))).toEqual(e);
  });

  it('prints one line per event: version, UTC time, type and a short summary', () => {
    const lines = formatTimeline(events);
    expect(lines).toHaveLength(events.length);
    expect(lines).toEqual([
      'v1   09:14:03.120  thread.created    by key:demo-local',
      `v2   09:14:03.120  run.requested     run ${DEMO_RUN} by key:demo-local: agent demo v1, "What is the weather in Oslo and Rome?"`,
      `v3   09:14:03.120  run.started       run ${DEMO_RUN} (agent demo v1)`,
      'v4   09:14:03.121  model.requested   step 1 attempt 1',
      'v5   09:14:33.124  run.resumed       RESUME from v4 (model call timed out) by orchestrator-7c9f-2',
      'v6   09:14:33.125  model.requested   RETRY step 1 attempt 2',
      'v7   09:14:33.139  model.responded   step 1 → 2 tool calls: demo.weather(city=Oslo), demo.weather(city=Rome)',
      `v8   09:14:33.139    tool.requested  demo.weather call_1_1 key …:${DEMO_RUN}:1:call_1_1`,
      `v9   09:14:33.139    tool.requested  demo.weather call_1_2 key …:${DEMO_RUN}:1:call_1_2`,
      'v10  09:14:33.151    tool.completed  call_1_2 → {"city":"Rome","forecast":"clear, 24°C","observedAt":"2026-…',
      'v11  09:14:33.154    tool.completed  call_1_1 → {"city":"Oslo","forecast":"light rain, 14°C"}',
      'v12  09:14:33.155  model.requested   step 2 attempt 1',
      'v13  09:14:33.166  model.responded   step 2 → answer "Here is what I found: {"city":"Oslo","forecast":"light rain…"',
      'v14  09:14:33.167  run.completed     "Here is what I found: {"city":"Oslo","forecast":"light rain…" after 2 steps',
    ]);
  });

  it('indents the tool events of a super-step under its model.responded, and only those', () => {
    const lines = formatTimeline(events);
    const indented = lines.filter((l) => /^\S+\s+\S+ {4}\S/.test(l)).map((l) => l.split(/\s+/)[2]);
    expect(indented).toEqual(['tool.requested', 'tool.requested', 'tool.completed', 'tool.completed']);
  });

  it('keeps a super-step grouped across a resume, and ends it at the next model call', () => {
    const log = events.slice(0, 9); // up to both tool.requested
    next(log, 'run.resumed', { fromVersion: 9, reason: 'worker lost', worker: 'w2' });
    next(log, 'tool.completed', { step: 1, callId: 'call_1_1', result: 'ok' });
    next(log, 'model.requested', { step: 2, attempt: 1, commandId: 'c' });
    next(log, 'tool.completed', { step: 1, callId: 'call_1_2', result: 'late' });
    const tail = formatTimeline(log).slice(-4).map(gist);
    expect(tail).toEqual([
      'run.resumed  RESUME from v9 (worker lost) by w2',
      '  tool.completed  call_1_1 → "ok"',
      'model.requested  step 2 attempt 1',
      'tool.completed  call_1_2 → "late"',
    ]);
  });

  it('summarises failures, cancels and uncertain effects', () => {
    const log = events.slice(0, 9);
    next(log, 'effect.uncertain', {
      step: 1,
      callId: 'call_1_1',
      idempotencyKey: 'k1',
      reason: 'executor died after\nstarting the effect',
    });
    next(log, 'tool.failed', {
      step: 1,
      callId: 'call_1_2',
      error: { code: 'run.cancelled', message: 'cancelled: user asked', retryable: false },
    });
    next(log, 'run.cancelled', { by: 'alice', reason: 'user asked', closedCalls: ['call_1_1', 'call_1_2'] });
    expect(formatTimeline(log).slice(-3).map(gist)).toEqual([
      '  effect.uncertain  call_1_1 key k1: executor died after starting the effect',
      '  tool.failed  call_1_2 ✗ run.cancelled: cancelled: user asked',
      'run.cancelled  by alice: user asked (closed call_1_1, call_1_2)',
    ]);

    const failed = events.slice(0, 4);
    next(failed, 'run.failed', {
      error: { code: 'run.max_steps', message: 'the run reached its limit of 5 model calls', retryable: false },
    });
    expect(gist(formatTimeline(failed).at(-1)!)).toBe(
      'run.failed  run.max_steps: the run reached its limit of 5 model calls',
    );
  });

  it('shows approvals with the role, expiry and decider', () => {
    const log = events.slice(0, 7);
    next(log, 'approval.requested', {
      step: 1,
      callId: 'call_1_1',
      approvalId: 'ap_1',
      tool: 'demo.weather',
      argsDigest: 'sha256:ab',
      role: 'ops',
      expiresAt: '2026-11-30T09:44:33.139Z',
      fourEyes: false,
    });
    next(log, 'approval.granted', { approvalId: 'ap_1', callId: 'call_1_1', by: 'bob' });
    next(log, 'approval.rejected', { approvalId: 'ap_2', callId: 'call_1_2', by: 'bob', reason: 'no' });
    expect(formatTimeline(log).slice(-3).map(gist)).toEqual([
      '  approval.requested  demo.weather call_1_1 needs role ops (approval ap_1, expires 09:44:33.139)',
      '  approval.granted  ap_1 for call_1_1 by bob',
      '  approval.rejected  ap_2 for call_1_2 by bob: no',
    ]);
  });

  it('shows at most three calls of a wide super-step, and quotes arguments that are not plain words', () => {
    const log = events.slice(0, 6);
    next(log, 'model.responded', {
      step: 1,
      commandId: 'c',
      content: null,
      toolCalls: [
        { id: 'a', name: 'search', args: { q: 'rain "Oslo"', n: 3 } },
        { id: 'b', name: 'search', args: { q: 'x'.repeat(40) } },
        { id: 'c', name: 'noop', args: {} },
        { id: 'd', name: 'noop', args: {} },
      ],
      usage: { inputTokens: 1, outputTokens: 1 },
      model: 'm',
    });
    expect(gist(formatTimeline(log).at(-1)!)).toBe(
      `model.responded  step 1 → 4 tool calls: search(q="rain \\"Oslo\\"", n=3), search(q=${'x'.repeat(23)}…), noop(), +1 more`,
    );
  });

  it('starts anywhere in the log (e.g. --from) without knowing the run’s agent', () => {
    const lines = formatTimeline(events.slice(2, 4));
    expect(lines.map(gist)).toEqual([
      `run.started  run ${DEMO_RUN} (max 5 steps)`,
      'model.requested  step 1 attempt 1',
    ]);
    expect(formatTimeline([])).toEqual([]);
  });

  it('colours only through the styler it is given', () => {
    const used: Style[] = [];
    const lines = formatTimeline(events, {
      style: (s, text) => {
        used.push(s);
        return `<${s}>${text}</${s}>`;
      },
    });
    expect(lines[13]).toMatch(/^<dim>v14<\/dim>  <dim>09:14:33.167<\/dim>  <green>run.completed<\/green>     "Here/);
    expect(lines[5]).toContain('<yellow>RETRY</yellow> step 1 attempt 2');
    expect(new Set(used)).toEqual(new Set(['dim', 'cyan', 'blue', 'magenta', 'yellow', 'green']));
    expect(formatTimeline(events).join('\n')).not.toContain('\u001b[');
  });

  it('cuts long values to maxValueLength', () => {
    const lines = formatTimeline(events, { maxValueLength: 20 });
    expect(gist(lines[9]!)).toBe('  tool.completed  call_1_2 → {"city":"Rome","for…');
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('abcd', 3)).toBe('ab…');
    expect(clock('2026-11-30T10:14:03.120+01:00')).toBe('09:14:03.120');
  });

  it('shows the effect ledger on each tool request and the trace id where it changes', () => {
    const key = (call: string) => `demo:th_Q2x8mVn1pL0aZrT5yKe3wB:${DEMO_RUN}:1:${call}`;
    const ledger = new Map([[key('call_1_1'), { state: 'succeeded', attempts: 2 }]]);
    const lines = formatTimeline(events, { ledger, traces: true });
    expect(lines[0]).toMatch(/by key:demo-local trace 4bf92f3577b34da6a3ce929d0e0e4736$/);
    expect(lines.slice(1).join('\n')).not.toContain('trace '); // the same trace all along
    expect(lines[7]).toMatch(/call_1_1 key .* \[ledger succeeded ×2 RETRIED\]$/);
    expect(lines[8]).toMatch(/call_1_2 key .* \[ledger: none\]$/);
    expect(formatTimeline(events)[7]).not.toContain('ledger');
  });
});
