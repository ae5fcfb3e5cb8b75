import type { MessagePublisher, PublishOptions, PublishResult } from '@ratchet/adapters';
import { TransientError, type OutboxStore, type PendingOutboxMessage } from '@ratchet/domain';
import { OutboxRelay } from './outbox.relay';

/** Just enough of the Postgres store's contract: SKIP LOCKED batches, per-row failures stay unsent. */
class FakeOutboxStore implements OutboxStore {
  rows: (PendingOutboxMessage & { sentAt: Date | null })[] = [];
  private locked = new Set<string>();
  pruned: Date[] = [];

  add(n: number, from = 0): string[] {
    const ids: string[] = [];
    for (let i = from; i < from + n; i++) {
      const id = `row-${i}`;
      ids.push(id);
      this.rows.push({
        id,
        subject: `t.events.a.${i}`,
        payload: { i },
        headers: { traceparent: `tp-${i}` },
        createdAt: new Date(),
        attempts: 0,
        sentAt: null,
      });
    }
    return ids;
  }

  async relayBatch(
    limit: number,
    publish: (m: PendingOutboxMessage) => Promise<void>,
    ids?: string[],
    minAgeMs = 0,
  ): Promise<number> {
    const wanted = ids && new Set(ids);
    const bornBefore = Date.now() - minAgeMs;
    const batch = this.rows
      .filter(
        (r) =>
          r.sentAt === null &&
          !this.locked.has(r.id) &&
          (!wanted || wanted.has(r.id)) &&
          (minAgeMs <= 0 || r.createdAt.getTime() < bornBefore),
      )
      .slice(0, limit);
    batch.forEach((r) => this.locked.add(r.id));
    let sent = 0;
    try {
      for (const r of batch) {
        try {
          await publish({
            id: r.id,
            subject: r.subject,
            payload: r.payload,
            headers: r.headers,
            createdAt: r.createdAt,
            attempts: r.attempts,
          });
          r.sentAt = new Date();
          sent++;
        } catch {
          // stays unsent
        }
        r.attempts++;
      }
    } finally {
      batch.forEach((r) => this.locked.delete(r.id));
    }
    return sent;
  }

  markSentCalls: string[][] = [];
  async markSent(ids: readonly string[]): Promise<void> {
    this.markSentCalls.push([...ids]);
    for (const r of this.rows)
      if (ids.includes(r.id) && r.sentAt === null) {
        r.sentAt = new Date();
        r.attempts++;
      }
  }

  async renewLease(): Promise<void> {}
  async releaseLease(): Promise<void> {}
  async prune(olderThan: Date): Promise<number> {
    this.pruned.push(olderThan);
    const before = this.rows.length;
    this.rows = this.rows.filter((r) => r.sentAt === null || r.sentAt >= olderThan);
    return before - this.rows.length;
  }

  async lag() {
    const unsent = this.rows.filter((r) => r.sentAt === null);
    return { unsent: unsent.length, oldestCreatedAt: unsent[0]?.createdAt ?? null };
  }

  unsent(): string[] {
    return this.rows.filter((r) => r.sentAt === null).map((r) => r.id);
  }
}

class RecordingPublisher implements MessagePublisher {
  published: { subject: string; payload: unknown; opts: PublishOptions }[] = [];
  fail: (subject: string, opts: PublishOptions) => Error | undefined = () => undefined;
  delayMs = 0;
  async publish(subject: string, payload: unknown, opts: PublishOptions): Promise<PublishResult> {
    if (this.delayMs) await sleep(this.delayMs);
    const error = this.fail(subject, opts);
    if (error) throw error;
    this.published.push({ subject, payload, opts });
    return { seq: this.published.length, duplicate: false };
  }
  ids(): string[] {
    return this.published.map((p) => p.opts.msgId);
  }
}

describe('OutboxRelay', () => {
  let store: FakeOutboxStore;
  let publisher: RecordingPublisher;
  let errors: string[];
  let relay: OutboxRelay;
  beforeEach(() => {
    store = new FakeOutboxStore();
    publisher = new RecordingPublisher();
    errors = [];
    relay = new OutboxRelay(store, publisher, {
      intervalMs: 20,
      batchSize: 4,
      sweepGraceMs: 0,
      onError: (e, what) => errors.push(`${what}: ${String(e)}`),
    });
  });
  afterEach(() => relay.stop());

  it('flush(ids) publishes exactly the rows just committed, with msgId = row id and the row headers', async () => {
    store.add(3);
    const mine = store.add(2, 3);
    expect(await relay.flush(mine)).toBe(2);
    expect(publisher.published).toEqual([
      { subject: 't.events.a.3', payload: { i: 3 }, opts: { msgId: 'row-3', headers: { traceparent: 'tp-3' } } },
      { subject: 't.events.a.4', payload: { i: 4 }, opts: { msgId: 'row-4', headers: { traceparent: 'tp-4' } } },
    ]);
    expect(store.unsent()).toEqual(['row-0', 'row-1', 'row-2']);
    expect(await relay.flush([])).toBe(0);
  });

  it('flush() without ids relays everything unsent, in batches', async () => {
    store.add(10);
    expect(await relay.flush()).toBe(10);
    expect(publisher.ids()).toEqual(store.rows.map((r) => r.id));
    expect(store.unsent()).toEqual([]);
  });

  it('flush(ids) with more ids than a batch holds', async () => {
    const ids = store.add(9);
    expect(await relay.flush(ids)).toBe(9);
  });

  it('never publishes a row twice when flushes and sweeps overlap', async () => {
    publisher.delayMs = 2;
    const ids = store.add(40);
    const results = await Promise.all([
      relay.flush(ids),
      relay.sweep(),
      relay.flush(),
      relay.flush(ids.slice(10, 20)),
      relay.sweep(),
    ]);
    expect(results.reduce((a, b) => a + b, 0)).toBe(40);
    expect(publisher.ids().sort()).toEqual([...ids].sort());
  });

  it('a flush that fails does not reject; the sweeper relays the rows once the bus is back', async () => {
    let down = true;
    publisher.fail = () => (down ? new TransientError('nats down', 'nats.timeout') : undefined);
    const ids = store.add(3);
    expect(await relay.flush(ids)).toBe(0);
    // the first transient failure stops the batch: the other rows were not tried against a dead bus
    expect(store.rows.map((r) => r.attempts)).toEqual([1, 1, 1]);
    expect(publisher.published).toHaveLength(0);
    relay.start();
    await sleep(60);
    expect(store.unsent()).toEqual(ids);
    down = false;
    await waitFor(() => store.unsent().length === 0);
    expect(publisher.ids()).toEqual(ids);
  });

  it('stops after the first transient failure in a batch so order is kept', async () => {
    const calls: string[] = [];
    publisher.fail = (_s, opts) => {
      calls.push(opts.msgId);
      return opts.msgId === 'row-1' ? new TransientError('timeout') : undefined;
    };
    store.add(4);
    expect(await relay.flush()).toBe(1);
    expect(calls).toEqual(['row-0', 'row-1']);
    expect(store.unsent()).toEqual(['row-1', 'row-2', 'row-3']);
  });

  it('a row that can never be published does not block the rows behind it', async () => {
    publisher.fail = (_s, opts) => (opts.msgId === 'row-0' ? new Error('MAX_PAYLOAD_EXCEEDED') : undefined);
    store.add(3);
    expect(await relay.flush()).toBe(2);
    expect(store.unsent()).toEqual(['row-0']);
    expect(errors.some((e) => e.includes('row-0') && e.includes('cannot be published'))).toBe(true);
  });

  it('prunes sent rows older than the retention, now and then', async () => {
    relay = new OutboxRelay(store, publisher, { intervalMs: 10, retentionMs: 60_000, pruneEveryMs: 1_000 });
    store.add(2);
    await relay.flush();
    const old = store.rows[0]!;
    old.sentAt = new Date(Date.now() - 120_000);
    relay.start();
    await waitFor(() => store.pruned.length === 1);
    await sleep(100);
    expect(store.pruned).toHaveLength(1); // not on every tick
    expect(Date.now() - store.pruned[0]!.getTime()).toBeGreaterThanOrEqual(60_000);
    expect(store.rows.map((r) => r.id)).toEqual(['row-1']);
  });

  it('publishCommitted publishes the committed messages in order from memory, then marks them sent', async () => {
    store.add(2); // older rows: not this commit's business
    const mine = store.add(3, 2);
    const messages = store.rows
      .filter((r) => mine.includes(r.id))
      .map(({ id, subject, payload, headers }) => ({
        id,
        subject,
        payload,
        headers,
      }));
    expect(await relay.publishCommitted(messages)).toBe(3);
    expect(publisher.ids()).toEqual(mine);
    expect(publisher.published[0]).toEqual({
      subject: 't.events.a.2',
      payload: { i: 2 },
      opts: { msgId: 'row-2', headers: { traceparent: 'tp-2' } },
    });
    await waitFor(() => store.unsent().length === 2);
    expect(store.unsent()).toEqual(['row-0', 'row-1']);
    expect(await relay.publishCommitted([])).toBe(0);
  });

  it('marks the rows of many commits with few statements', async () => {
    const ids = store.add(40);
    const counts = await Promise.all(
      ids.map((id) => {
        const r = store.rows.find((row) => row.id === id)!;
        return relay.publishCommitted([{ id, subject: r.subject, payload: r.payload, headers: r.headers }]);
      }),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(40);
    await relay.stop(); // waits for the marking too
    expect(store.unsent()).toEqual([]);
    expect(store.markSentCalls.flat().sort()).toEqual([...ids].sort());
    expect(store.markSentCalls.length).toBeLessThan(40);
  });

  it('hands published rows to a committing transaction to mark; what it takes the relay does not mark, what it gives back it does', async () => {
    const ids = store.add(4);
    const messages = ids.map((id) => {
      const r = store.rows.find((row) => row.id === id)!;
      return { id, subject: r.subject, payload: r.payload, headers: r.headers };
    });
    expect(await relay.publishCommitted(messages)).toBe(4);
    // Fewer waiting than a transaction asks for: it takes none.
    expect(relay.take(3, 16)).toEqual([]);
    // Before the mark delay is over, a transaction takes three; it fails and gives one back.
    const taken = relay.take(3);
    expect(taken).toEqual(ids.slice(0, 3));
    relay.giveBack([taken[2]!]);
    await relay.stop();
    expect(store.markSentCalls.flat().sort()).toEqual([ids[2]!, ids[3]!].sort());
    expect(relay.take(10)).toEqual([]);
  });

  it('a failed publishCommitted leaves the rows unsent for the sweeper, which waits out the grace period', async () => {
    relay = new OutboxRelay(store, publisher, { intervalMs: 10, sweepGraceMs: 300, onError: () => undefined });
    let down = true;
    publisher.fail = () => (down ? new TransientError('nats down', 'nats.timeout') : undefined);
    const ids = store.add(2);
    const messages = store.rows.map(({ id, subject, payload, headers }) => ({ id, subject, payload, headers }));
    expect(await relay.publishCommitted(messages)).toBe(0);
    down = false;
    relay.start();
    await sleep(100);
    expect(publisher.published).toHaveLength(0); // too young: their own handler may still be on them
    await waitFor(() => store.unsent().length === 0);
    expect(publisher.ids()).toEqual(ids);
  });

  it('stop() waits for a running flush', async () => {
    publisher.delayMs = 50;
    const ids = store.add(2);
    const flushing = relay.flush(ids);
    await sleep(10);
    await relay.stop();
    expect(store.unsent()).toEqual([]);
    expect(await flushing).toBe(2);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting for condition');
    await sleep(5);
  }
}
