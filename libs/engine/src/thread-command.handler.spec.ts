import { InMemoryThreadStore } from '@ratchet/adapters';
import { subjects, type ThreadInboxMessage } from '@ratchet/contracts';
import type { CommittedPublisher, OutboxMessage, PendingMarks, ThreadCommand, ThreadState } from '@ratchet/domain';
import { requestRunCommand } from '@ratchet/testing';
import { ThreadCommandHandler } from './thread-command.handler';
import type { OutgoingRequest } from './engine-deps';

// The engine on its own, over the in-memory store: only what a service must hand it, nothing of the
// orchestrator's (its outgoing mapping is replaced by one that records what it was asked).

const at = '2026-12-01T10:00:00.000Z';
const request = requestRunCommand('acme', 'th_engine', 'run_engine', at);

/**
 * Records what it publishes; `marking`, it also marks the rows sent in the store, as the relay soon does;
 * `dying`, it publishes nothing (its process dies right after the commit).
 */
class RecordingRelay implements CommittedPublisher {
  published: OutboxMessage[] = [];
  constructor(
    private readonly store: InMemoryThreadStore<ThreadState>,
    private readonly mode: 'marking' | 'dying' | 'not marking',
  ) {}
  async publishCommitted(messages: readonly OutboxMessage[]): Promise<number> {
    if (this.mode === 'dying') return 0;
    this.published.push(...messages);
    if (this.mode === 'marking') await this.store.markSent(messages.map((m) => m.id));
    return messages.length;
  }
}

/** The relay's published rows waiting to be marked sent, as a decision sees them. */
class WaitingMarks implements PendingMarks {
  waiting: string[] = [];
  givenBack: string[] = [];
  take(max: number, atLeast = 1): string[] {
    return this.waiting.length < atLeast ? [] : this.waiting.splice(0, max);
  }
  giveBack(ids: readonly string[]): void {
    this.givenBack.push(...ids);
    this.waiting.push(...ids);
  }
}

function engine(
  group: { maxBatch: number },
  marks?: PendingMarks,
  {
    store = new InMemoryThreadStore<ThreadState>(),
    relayMode = 'not marking' as ConstructorParameters<typeof RecordingRelay>[1],
    process = '',
  } = {},
) {
  const relay = new RecordingRelay(store, relayMode);
  const asked: OutgoingRequest[] = [];
  const handler = new ThreadCommandHandler({
    store,
    relay,
    marks,
    subjects: subjects('t'),
    outgoing: async (r) => {
      asked.push(r);
      // A row whose id is taken already: the commit fails (after the decision took its marks).
      if (r.context.threadId === 'th_broken')
        return [{ id: 'decision:ev_1', subject: 't.x', payload: {}, headers: {} }];
      return [];
    },
    toCommand: (_message: ThreadInboxMessage): ThreadCommand => {
      throw new Error('no inbox message in these tests');
    },
    ids: {
      next: (() => {
        let n = 0;
        return (prefix: string) => `${prefix}_${process}${++n}`;
      })(),
    },
    group,
  });
  return { handler, relay, asked, store };
}

describe.each([1, 8])('the thread engine on its own (maxBatch %i)', (maxBatch) => {
  it('decides a run request, hands its requests to the outgoing mapping, and publishes its events after the commit', async () => {
    const { handler, relay, asked } = engine({ maxBatch });
    const outcome = await handler.handle('requests', 'm-1', request, { correlationId: request.requestId });
    expect(outcome.status).toBe('applied');
    expect(outcome.events.map((e) => e.type)).toContain('run.started');
    // Envelopes: the thread's versions from 1 without a gap, ids from the given source, caused by the message.
    expect(outcome.events.map((e) => e.version)).toEqual(outcome.events.map((_, i) => i + 1));
    expect(outcome.events.map((e) => e.id)).toEqual(outcome.events.map((_, i) => `ev_${i + 1}`));
    expect(new Set(outcome.events.map((e) => `${e.tenantId}/${e.threadId}@${e.causationId}`))).toEqual(
      new Set(['acme/th_engine@m-1']),
    );
    expect(asked.flatMap((r) => r.outgoing.map((o) => o.kind))).toContain('model.call');
    expect(asked[0]?.transcript?.map((m) => m.content)).toEqual(['hello']);
    // The decision as one message on the thread's feed (v2), its events in order.
    expect(relay.published.map((m) => m.subject)).toEqual(['t.feed.acme.th_engine']);
    expect(relay.published.map((m) => m.id)).toEqual([`decision:${outcome.events[0]!.id}`]);
    expect((relay.published[0]!.payload as { events: { id: string }[] }).events.map((e) => e.id)).toEqual(
      outcome.events.map((e) => e.id),
    );
  });

  it('decides a message it already claimed as a duplicate, writing and publishing nothing', async () => {
    const { handler, relay } = engine({ maxBatch }, undefined, { relayMode: 'marking' });
    await handler.handle('requests', 'm-1', request, { correlationId: request.requestId });
    const published = relay.published.length;
    const again = await handler.handle('requests', 'm-1', request, { correlationId: request.requestId });
    expect(again).toEqual({ status: 'duplicate', events: [] });
    expect(relay.published).toHaveLength(published);
  });

  it("publishes the thread's feed rows a crash left unpublished first: before its own decision's, or on the lost one's redelivery", async () => {
    const store = new InMemoryThreadStore<ThreadState>();
    const process = (name: string, relayMode: 'dying' | 'marking') =>
      engine({ maxBatch }, undefined, { store, relayMode, process: name });
    // A process commits a run request and dies before publishing its decision.
    const first = await process('a', 'dying').handler.handle('requests', 'm-1', request, { correlationId: 'c-1' });
    // Another process takes the next message of the thread: the lost decision goes out first, then its own.
    const next = process('b', 'marking');
    const cancel: ThreadCommand = {
      ...{ type: 'CancelRun', tenantId: 'acme', threadId: 'th_engine', runId: 'run_engine', at },
      ...{ by: 'alice', reason: 'changed my mind' },
    };
    const cancelled = await next.handler.handle('control', 'm-2', cancel, { correlationId: 'c-2' });
    expect(cancelled.status).toBe('applied');
    expect(next.relay.published.map((m) => m.id)).toEqual([
      `decision:${first.events[0]!.id}`,
      `decision:${cancelled.events[0]!.id}`,
    ]);
    expect((await store.lag()).unsent).toBe(0);
    // Lost again; this time the redelivered message that caused it is the next one: a duplicate, which
    // publishes what its first delivery committed.
    const second = requestRunCommand('acme', 'th_engine', 'run_second', at);
    const retry = await process('c', 'dying').handler.handle('requests', 'm-3', second, { correlationId: 'c-3' });
    const redelivery = process('d', 'marking');
    const again = await redelivery.handler.handle('requests', 'm-3', second, { correlationId: 'c-3' });
    expect(again.status).toBe('duplicate');
    expect(redelivery.relay.published.map((m) => m.id)).toEqual([`decision:${retry.events[0]!.id}`]);
    // Nothing left unsent: a later duplicate publishes nothing.
    const late = process('e', 'marking');
    await late.handler.handle('requests', 'm-3', second, { correlationId: 'c-3' });
    expect(late.relay.published).toEqual([]);
  });

  it("admits at most a tenant's bound of runs in flight from requests decided at once, in one batch or alone", async () => {
    const { handler } = engine({ maxBatch });
    const requests = Array.from({ length: 5 }, (_, i) => ({
      ...requestRunCommand('acme', `th_burst_${i}`, `run_burst_${i}`, at),
      activeRunLimit: 2,
    }));
    const outcomes = await Promise.all(
      requests.map((r, i) => handler.handle('requests', `m-burst-${i}`, r, { correlationId: r.requestId })),
    );
    const ends = outcomes.map((o) => o.events.find((e) => e.type === 'run.started' || e.type === 'run.rejected')?.type);
    expect(ends.filter((t) => t === 'run.started')).toHaveLength(2);
    expect(ends.filter((t) => t === 'run.rejected')).toHaveLength(3);
  });

  it("admits at most a concurrency key's max from requests decided at once, holds the rest, and admits them as room frees", async () => {
    const { handler } = engine({ maxBatch });
    const slots = (customer: number) => [{ key: `customer=${customer}`, max: 2 }];
    // Five requests of customer 1 and one of customer 2, decided at once.
    const requests = [1, 1, 1, 1, 1, 2].map((customer, i) => ({
      ...requestRunCommand('acme', `th_key_${i}`, `run_key_${i}`, at),
      slots: slots(customer),
    }));
    const outcomes = await Promise.all(
      requests.map((r, i) => handler.handle('requests', `m-key-${i}`, r, { correlationId: r.requestId })),
    );
    const first = (i: number) => outcomes[i]!.events.find((e) => e.type === 'run.started' || e.type === 'run.queued');
    expect([0, 1, 2, 3, 4].filter((i) => first(i)?.type === 'run.started')).toHaveLength(2);
    const held = [0, 1, 2, 3, 4].filter((i) => first(i)?.type === 'run.queued');
    expect(held).toHaveLength(3);
    expect(first(held[0]!)?.data).toMatchObject({ waitingFor: { bound: 'slot', key: 'customer=1', limit: 2 } });
    // Another key is not held up by a busy one.
    expect(first(5)?.type).toBe('run.started');
    // Admitting a held run while the key is full decides nothing; the same ask with room starts it.
    const admit = (i: number): ThreadCommand => ({
      type: 'AdmitRun',
      tenantId: 'acme',
      threadId: `th_key_${i}`,
      runId: `run_key_${i}`,
      at,
      slots: slots(1),
    });
    expect((await handler.handle('admission', 'a-1', admit(held[0]!), { correlationId: 'a' })).events).toEqual([]);
    const started = outcomes.findIndex((o, i) => i < 5 && first(i)?.type === 'run.started');
    const cancel: ThreadCommand = {
      ...{ type: 'CancelRun', tenantId: 'acme', threadId: `th_key_${started}`, runId: `run_key_${started}`, at },
      ...{ by: 'alice', reason: 'make room' },
    };
    await handler.handle('control', 'c-1', cancel, { correlationId: 'c' });
    const admitted = await Promise.all(
      held.map((i) => handler.handle('admission', `a-2-${i}`, admit(i), { correlationId: 'a' })),
    );
    // Room for one: one of the three starts, whether the asks were decided together or apart.
    expect(admitted.filter((o) => o.events.some((e) => e.type === 'run.started'))).toHaveLength(1);
  });

  it("marks the relay's published rows sent with its own commit, and gives them back when it fails", async () => {
    const marks = new WaitingMarks();
    const { handler, relay, store } = engine({ maxBatch }, marks);
    await handler.handle('requests', 'm-1', request, { correlationId: request.requestId });
    const first = relay.published.map((m) => m.id);
    expect((await store.lag()).unsent).toBe(first.length);
    // A few published rows are left to the relay: a lone decision does not wait for their marks.
    marks.waiting.push(...first);
    const lone = requestRunCommand('acme', 'th_lone', 'run_lone', at);
    await handler.handle('requests', 'm-lone', lone, { correlationId: lone.requestId });
    expect(marks.waiting).toEqual(first);
    // Many waiting (a busy relay): the next commit takes them along instead.
    const others = Array.from({ length: 64 }, (_, i) => `published-elsewhere-${i}`);
    marks.waiting.push(...others);
    const other = requestRunCommand('acme', 'th_other', 'run_other', at);
    await handler.handle('requests', 'm-2', other, { correlationId: other.requestId });
    expect(marks.waiting).toEqual([]);
    expect((await store.lag()).unsent).toBe(relay.published.length - first.length);
    // A commit that fails marks nothing, so its marks go back to the relay.
    marks.waiting.push(...relay.published.slice(first.length).map((m) => m.id), ...others);
    const taken = [...marks.waiting];
    const broken = requestRunCommand('acme', 'th_broken', 'run_broken', at);
    await expect(handler.handle('requests', 'm-3', broken, { correlationId: broken.requestId })).rejects.toThrow(
      'duplicate outbox id decision:ev_1',
    );
    expect((await store.lag()).unsent).toBe(relay.published.length - first.length);
    expect(marks.givenBack).toEqual(taken);
    expect(marks.waiting).toEqual(taken);
  });
});
