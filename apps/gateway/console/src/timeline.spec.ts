import { buildTimeline, type LogEvent } from './timeline';

let version = 0;
const ev = (type: string, data: Record<string, unknown>, extra: Partial<LogEvent> = {}): LogEvent => ({
  type,
  version: ++version,
  at: `2026-12-01T10:00:${String(version).padStart(2, '0')}Z`,
  runId: 'run_1',
  data,
  ...extra,
});
const call = (callId: string, tool: string) => ({ step: 1, callId, tool, args: {}, idempotencyKey: `k:${callId}` });

describe('buildTimeline', () => {
  it('given a step with two parallel calls, one waiting for approval, shows both side by side with their states', () => {
    version = 0;
    const [run] = buildTimeline([
      ev(
        'run.requested',
        { agent: 'pay' },
        { trace: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } },
      ),
      ev('run.started', {}),
      ev('model.requested', { step: 1, attempt: 1, commandId: 'm1' }),
      ev('model.responded', {
        step: 1,
        commandId: 'm1',
        content: null,
        model: 'x',
        usage: { inputTokens: 3, outputTokens: 2 },
      }),
      ev('tool.requested', call('c1', 'charge')),
      ev('tool.requested', call('c2', 'weather')),
      ev('approval.requested', { step: 1, callId: 'c1', approvalId: 'apr_1', role: 'approver' }),
      ev('tool.completed', { step: 1, callId: 'c2', result: { sunny: true } }),
    ]);
    expect(run).toMatchObject({ agent: 'pay', status: 'running', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    expect(run!.steps[0]!.calls.map((c) => [c.tool, c.state, c.approval?.status])).toEqual([
      ['charge', 'waiting for approval', 'pending'],
      ['weather', 'completed', undefined],
    ]);
    expect(run!.steps[0]!.answer).toEqual({ content: null, model: 'x', tokens: 5 });
  });

  it('when the approval is granted and the run ends, shows who granted it and the outcome', () => {
    version = 0;
    const [run] = buildTimeline([
      ev('tool.requested', call('c1', 'charge')),
      ev('approval.requested', { step: 1, callId: 'c1', approvalId: 'apr_1', role: 'approver' }),
      ev('approval.granted', { approvalId: 'apr_1', callId: 'c1', by: 'key:k2' }),
      ev('tool.completed', { step: 1, callId: 'c1', result: 'ok' }),
      ev('run.completed', { output: 'done', steps: 2 }),
    ]);
    expect(run!.steps[0]!.calls[0]).toMatchObject({
      state: 'completed',
      approval: { status: 'granted', by: 'key:k2' },
    });
    expect([run!.status, run!.outcome]).toEqual(['completed', 'done']);
  });

  it('marks retried attempts, redeliveries, resumes and uncertain effects', () => {
    version = 0;
    const [run] = buildTimeline([
      ev('model.requested', { step: 1, attempt: 1, commandId: 'm1' }),
      ev('model.requested', { step: 1, attempt: 2, commandId: 'm1', retryReason: 'provider 503' }),
      ev('run.resumed', { fromVersion: 2, reason: 'lease expired', worker: 'orchestrator-2' }),
      ev('model.requested', { step: 2, attempt: 1, commandId: 'm2', delivery: 2 }),
      ev('tool.requested', { ...call('c9', 'charge'), step: 2 }),
      ev('effect.uncertain', { step: 2, callId: 'c9', idempotencyKey: 'k:c9', reason: 'worker died mid-effect' }),
    ]);
    expect(run!.steps.map((s) => s.attempts.map((a) => [a.attempt, a.retry, a.reason ?? a.delivery]))).toEqual([
      [
        [1, false, undefined],
        [2, true, 'provider 503'],
      ],
      [[1, true, 2]],
    ]);
    expect(run!.resumes).toEqual([{ at: expect.any(String), reason: 'lease expired', worker: 'orchestrator-2' }]);
    expect(run!.steps[1]!.calls[0]).toMatchObject({ state: 'uncertain', detail: 'worker died mid-effect' });
  });
});
