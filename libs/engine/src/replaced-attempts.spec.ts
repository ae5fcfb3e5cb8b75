import type { ThreadEvent } from '@ratchet/contracts';
import type { ThreadState, ThreadTx } from '@ratchet/domain';
import { replacedAttemptLinks } from './replaced-attempts';

const tp = (n: number) => `00-${'a'.repeat(32)}-${n.toString(16).padStart(16, '0')}-01`;

function event(version: number, type: string, data: Record<string, unknown> = {}): ThreadEvent {
  return {
    id: `ev_${version}`,
    v: 1,
    tenantId: 't',
    threadId: 'th',
    runId: 'run_1',
    version,
    at: '2026-01-01T00:00:00.000Z',
    causationId: 'm',
    correlationId: 'c',
    trace: { traceparent: tp(version) },
    type,
    data,
  } as unknown as ThreadEvent;
}

/** The log as a transaction sees it; counts reads, so a test can tell loaded events from read ones. */
function logTx(log: ThreadEvent[]) {
  const reads: number[] = [];
  const tx = {
    loadEvents: async (_t: string, _th: string, after: number) => {
      reads.push(after);
      return log.filter((e) => e.version > after);
    },
  } as unknown as ThreadTx<ThreadState>;
  return { tx, reads };
}

const modelRequested = (version: number, attempt: number) =>
  event(version, 'model.requested', { step: 1, attempt, commandId: `run_1:model:1:${attempt}` });

describe('links to the attempt a decision replaces', () => {
  it('a model call’s next attempt links to the span that requested the one before, read from the log', async () => {
    const log = [event(1, 'thread.created'), event(2, 'run.requested'), event(3, 'run.started'), modelRequested(4, 1)];
    const { tx, reads } = logTx(log);
    const links = await replacedAttemptLinks(tx, { tenantId: 't', threadId: 'th', version: 4, newer: [] }, [
      modelRequested(5, 2),
    ]);
    expect(links).toHaveLength(1);
    expect(links[0]?.context.spanId).toBe(tp(4).split('-')[2]);
    expect(links[0]?.context.traceId).toBe('a'.repeat(32));
    expect(links[0]?.attributes).toEqual({ 'ratchet.link.reason': 'replaced_attempt', 'ratchet.attempt': 1 });
    expect(reads).toEqual([0]);
  });

  it('prefers the events loaded with the thread, and links a resume to the last event before it', async () => {
    const newer = [modelRequested(7, 1), event(8, 'model.requested', { step: 1, attempt: 2, commandId: 'x' })];
    const { tx, reads } = logTx([]);
    const links = await replacedAttemptLinks(tx, { tenantId: 't', threadId: 'th', version: 8, newer }, [
      event(9, 'run.resumed', { fromVersion: 8, reason: 'r', worker: 'w' }),
      modelRequested(10, 3),
    ]);
    expect(links.map((l) => [l.attributes?.['ratchet.link.reason'], l.context.spanId])).toEqual([
      ['resumed_after', tp(8).split('-')[2]],
      ['replaced_attempt', tp(8).split('-')[2]],
    ]);
    expect(reads).toEqual([]);
  });

  it('first attempts, and events stored without a trace, link to nothing', async () => {
    const untraced = { ...modelRequested(4, 1), trace: undefined } as ThreadEvent;
    const { tx } = logTx([untraced]);
    const on = { tenantId: 't', threadId: 'th', version: 4, newer: [] };
    expect(await replacedAttemptLinks(tx, on, [modelRequested(5, 1)])).toEqual([]);
    expect(await replacedAttemptLinks(tx, on, [modelRequested(5, 2)])).toEqual([]);
  });
});
